# source: https://github.com/isaac-sim/IsaacLab/pull/5923
# label: lookalike GG103
# effect: graph_built
# note: the fix: the low-level policy runs under torch.no_grad() and its output is detached before it is copied into the persistent action buffer, so nothing is recorded for the frozen policy
import torch


class JointPositionAction:
    """The low-level action term: scales joint targets and hands them to the robot."""

    def __init__(self, num_envs, action_dim, scale=0.5, offset=0.0):
        self.scale = scale
        self.offset = offset
        self._raw_actions = torch.zeros(num_envs, action_dim)
        self._processed_actions = torch.zeros(num_envs, action_dim)
        self.joint_pos_target = torch.zeros(num_envs, action_dim)

    @property
    def action_dim(self):
        return self._raw_actions.shape[1]

    def process_actions(self, actions):
        self._raw_actions[:] = actions
        self._processed_actions = self._raw_actions * self.scale + self.offset

    def apply_actions(self):
        self.joint_pos_target = self._processed_actions


class PreTrainedPolicyAction:
    """High-level action term that runs a pre-trained locomotion policy every `low_level_decimation` steps."""

    def __init__(self, policy, low_level_action_term, low_level_obs_fn, num_envs, command_dim=3,
                 low_level_decimation=4):
        self.policy = policy.eval()
        self._low_level_action_term = low_level_action_term
        self._low_level_obs_fn = low_level_obs_fn
        self.low_level_decimation = low_level_decimation
        self._raw_actions = torch.zeros(num_envs, command_dim)
        self.low_level_actions = torch.zeros(num_envs, low_level_action_term.action_dim)
        self._counter = 0

    def process_actions(self, actions):
        self._raw_actions[:] = actions

    def apply_actions(self):
        if self._counter % self.low_level_decimation == 0:
            low_level_obs = self._low_level_obs_fn(self._raw_actions)
            with torch.no_grad():
                low_level_actions = self.policy(low_level_obs)
            self.low_level_actions[:] = low_level_actions.detach()
            self._low_level_action_term.process_actions(self.low_level_actions)
            self._counter = 0
        self._low_level_action_term.apply_actions()
        self._counter += 1


def observe():
    num_envs, obs_dim, joints = 4, 9, 12
    policy = torch.nn.Sequential(torch.nn.Linear(obs_dim, 32), torch.nn.ELU(), torch.nn.Linear(32, joints))
    joint_pos = JointPositionAction(num_envs, joints)
    proprio = torch.randn(num_envs, obs_dim - 3)

    def low_level_obs(command):
        return torch.cat([proprio, command], dim=-1)

    from corpus.oracle import hook_outputs

    built = hook_outputs(policy)
    term = PreTrainedPolicyAction(policy, joint_pos, low_level_obs, num_envs)
    for _ in range(8):
        term.process_actions(torch.randn(num_envs, 3))
        term.apply_actions()
    return {"built": built}
