"""What GradGuard knows about torch without importing it (facts from rules.md)."""

from __future__ import annotations


# Tensor methods whose result never carries a graph.
NEVER_GRAD_METHODS = frozenset(
    """argmax argmin item tolist numpy detach size dim ndimension numel nelement
    element_size eq ne lt le gt ge equal isnan isinf isfinite isneginf isposinf
    nonzero count_nonzero long int bool byte short char is_contiguous
    is_floating_point is_complex data_ptr stride storage_offset get_device argsort
    logical_and logical_or logical_not logical_xor isclose allclose any all
    bincount signbit multinomial""".split()
)
# Tensor methods whose result no longer carries the graph of the tensor they read: where a graph ends
# (GG103's sinks). Shape reads (`size`, `dim`) read no values and are not among them; nor is `.detach()`,
# a cut that may feed a loss (GAN discriminator steps, targets: GG301's business).
ENDS_GRAPH_METHODS = frozenset(
    """item tolist numpy argmax argmin eq ne lt le gt ge equal isnan isinf isfinite nonzero
    count_nonzero long int bool byte short char argsort allclose isclose any all bincount multinomial""".split()
)
# Tensor methods that return a Python number or bool (not a tensor).
NUMBER_METHODS = frozenset(
    """size dim ndimension numel nelement element_size is_contiguous is_floating_point
    is_complex data_ptr stride storage_offset get_device equal allclose item""".split()
)
# Of those, the ones that ask a shape: whatever the receiver is (a tensor, an array, a frame), the
# answer carries no graph.
SHAPE_QUERIES = frozenset("size dim ndimension numel nelement element_size stride".split())
# Tensor attributes that are not differentiable tensors.
NEVER_GRAD_ATTRIBUTES = frozenset(
    "shape dtype device ndim requires_grad is_leaf grad grad_fn is_cuda layout names data".split()
)
# Functions and methods that return a tuple, item by item: "grad" (differentiable: it carries its
# inputs' graph) or "none" (never requires grad: indices, pivots, info codes, a permutation).
# Keyed by the name after `torch.` (`linalg.svd`); a tensor method of the same last name (`x.topk`,
# `a.svd()`) gives the same. Checked with torch 2.13 (tests/runtime/test_torch_facts.py).
TUPLE_RESULTS = {
    "topk": ("grad", "none"), "sort": ("grad", "none"), "kthvalue": ("grad", "none"),
    "cummax": ("grad", "none"), "cummin": ("grad", "none"), "aminmax": ("grad", "grad"),
    "max": ("grad", "none"), "min": ("grad", "none"), "median": ("grad", "none"),
    "nanmedian": ("grad", "none"), "mode": ("grad", "none"),
    "std_mean": ("grad", "grad"), "var_mean": ("grad", "grad"), "frexp": ("grad", "none"),
    "svd": ("grad", "grad", "grad"), "linalg.svd": ("grad", "grad", "grad"),
    "linalg.eigh": ("grad", "grad"), "linalg.eig": ("grad", "grad"),
    "qr": ("grad", "grad"), "linalg.qr": ("grad", "grad"), "geqrf": ("grad", "grad"),
    "slogdet": ("grad", "grad"), "linalg.slogdet": ("grad", "grad"),
    "linalg.lu_factor": ("grad", "none"), "linalg.lu": ("none", "grad", "grad"),
    "linalg.lstsq": ("grad", "grad", "none", "none"), "linalg.inv_ex": ("grad", "none"),
    "linalg.cholesky_ex": ("grad", "none"), "linalg.solve_ex": ("grad", "none"),
    "linalg.ldl_factor": ("grad", "none"),
}
# What calling a torch.nn layer returns, where it is a tuple: "t" a tensor, a nested tuple for
# (h, c). (`nn.LSTM` gives `output, (h_n, c_n)`; `nn.GRU`/`nn.RNN` `output, h_n`; `nn.LSTMCell` `(h, c)`.)
LAYER_RESULTS = {
    "LSTM": ("t", ("t", "t")), "GRU": ("t", "t"), "RNN": ("t", "t"), "LSTMCell": ("t", "t"),
    "MultiheadAttention": ("t", "t"),
}
# Of those, the ones that return a tuple only when given a dim (`x.max()` is one tensor).
TUPLE_NEEDS_DIM = frozenset("max min median nanmedian mode".split())
# Views share storage with their base (rules.md; reshape/flatten view when they can).
VIEW_METHODS = frozenset(
    """view view_as reshape reshape_as t transpose permute squeeze unsqueeze flatten
    unflatten expand expand_as narrow select unfold diagonal as_strided movedim
    moveaxis swapaxes swapdims""".split()
)
VIEW_ATTRIBUTES = frozenset("T mT H mH real imag".split())
# Methods that keep the receiver's grad state and return a tensor.
SAME_GRAD_METHODS_RETURN_SELF_KIND = frozenset(
    "to cpu cuda float double half bfloat16 contiguous clone type_as pin_memory".split()
)
# Members only a tensor has (not a NumPy array, a list, a dict or a number): a name whose value
# reaches one through TENSOR_KEEPING steps (`box.flatten(2)[0].data.numpy()`) holds a tensor.
TENSOR_ONLY_MEMBERS = frozenset(
    """numpy cpu cuda detach detach_ numel nelement unsqueeze unsqueeze_ permute sigmoid softmax
    log_softmax requires_grad requires_grad_ grad_fn backward is_cuda contiguous masked_fill
    register_hook retain_grad""".split()
)
# Steps that give a tensor of a tensor and an array of an array (neither proves a tensor by itself).
TENSOR_KEEPING = VIEW_METHODS | SAME_GRAD_METHODS_RETURN_SELF_KIND | frozenset(
    "data T squeeze abs exp log clamp clip round float sum mean max min".split()
)
# Integer/bool dtypes: a cast to one of these has no graph.
INTEGER_DTYPES = frozenset(
    "long int int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool short".split()
)
# `isinstance(x, T)` with only these types says x is no tensor in the body (`np` as commonly imported).
NOT_TENSOR_TYPES = frozenset(
    "numpy.ndarray numpy.generic np.ndarray np.generic list tuple dict str int float bool numbers.Number".split()
)
# Items of a model's output dict that hold class indices (torchvision detection's
# `outputs[0]["labels"]`, detectron2's `pred_classes`): integer tensors, which never require grad.
INTEGER_OUTPUT_KEYS = frozenset(("labels", "pred_classes", "class_ids"))
# Reductions whose result is a 0-dim tensor when called without a dim.
SCALAR_REDUCTIONS = frozenset("mean sum norm prod std var max min amax amin logsumexp".split())
# Reductions whose first argument is an order, not a dim: `x.norm(2)` and `torch.norm(x, 2)` are 0-dim;
# their dim is the argument after it.
ORDER_FIRST = frozenset(("norm",))

# torch.* factories: a new tensor with no graph unless requires_grad=True.
FACTORIES = frozenset(
    """tensor as_tensor from_numpy zeros ones empty full rand randn randint randperm
    arange range linspace logspace eye zeros_like ones_like empty_like full_like
    rand_like randn_like randint_like normal bernoulli poisson multinomial
    frombuffer asarray complex polar tril_indices triu_indices""".split()
)
# torch.* functions whose result never carries a graph.
NEVER_GRAD_FUNCTIONS = frozenset(
    """argmax argmin eq ne lt le gt ge isnan isinf isfinite nonzero
    count_nonzero bucketize searchsorted argsort
    logical_and logical_or logical_not logical_xor isclose allclose
    manual_seed seed initial_seed get_rng_state""".split()
)
# torch.* functions that return something other than a new tensor.
NOT_TENSOR_FUNCTIONS = frozenset(
    """no_grad enable_grad inference_mode set_grad_enabled is_grad_enabled device dtype save
    load cuda compile finfo iinfo get_default_dtype set_default_dtype is_tensor
    is_floating_point is_complex numel typename promote_types result_type can_cast
    is_autocast_enabled get_autocast_gpu_dtype autocast use_deterministic_algorithms
    set_printoptions set_num_threads get_num_threads is_inference_mode_enabled
    broadcast_shapes jit distributed""".split()
)
# torch functions that build no tensor (context managers, settings, I/O).
GRAD_CONTEXTS_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
GRAD_CONTEXTS_ON = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})

# nn classes without parameters: calling them keeps the input's grad state.
PARAMETERLESS_MODULES = frozenset(
    """ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Sigmoid LogSigmoid Tanh
    Softmax Softmax2d LogSoftmax Softmin Softplus Softsign Softshrink Hardshrink
    Hardtanh Hardswish Hardsigmoid Tanhshrink Threshold GLU Dropout Dropout1d
    Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout Identity Flatten Unflatten
    MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d
    AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d
    AdaptiveMaxPool3d LPPool1d LPPool2d LPPool3d FractionalMaxPool2d
    FractionalMaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d Upsample
    UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle PixelUnshuffle
    ChannelShuffle ZeroPad1d ZeroPad2d ZeroPad3d ConstantPad1d ConstantPad2d
    ConstantPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d
    ReplicationPad1d ReplicationPad2d ReplicationPad3d CircularPad1d
    CircularPad2d CircularPad3d CosineSimilarity PairwiseDistance Fold Unfold
    LocalResponseNorm CrossMapLRN2d""".split()
)
# torch.optim.Optimizer's list of dicts whose "params" entries are the parameters it updates.
OPTIMIZER_GROUPS = "param_groups"
# nn containers that are not called: their items are modules.
MODULE_CONTAINERS = frozenset("ModuleList ModuleDict".split())
PARAM_CONTAINERS = frozenset("ParameterList ParameterDict".split())
# Methods of a module that return the module itself.
MODULE_SELF_METHODS = frozenset(
    "to cuda cpu train eval float half double bfloat16 requires_grad_ type apply share_memory to_empty xpu".split()
)
# Wrappers that return a module: DataParallel(model), torch.compile(model).
MODULE_WRAPPERS = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.compile",
        "torch.jit.script",
    }
)

# Ops that save their own output for backward: writing into that output corrupts the gradient.
OUTPUT_SAVING = frozenset("sigmoid tanh exp exp2 expm1 softmax log_softmax relu sqrt rsqrt elu".split())
# Ops that save their inputs (the gradient of one operand needs the other).
INPUT_SAVING = frozenset("mul matmul mm bmm mv einsum div linear conv1d conv2d conv3d".split())

# `Variable(t)` returns `t` itself (a no-op since torch 0.4).
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

# torch.nn.functional losses (their result is a scalar unless reduction="none").
# torch.nn's loss modules (subclasses of nn.modules.loss._Loss).
NN_LOSSES = frozenset(
    """BCELoss BCEWithLogitsLoss CTCLoss CosineEmbeddingLoss CrossEntropyLoss GaussianNLLLoss HingeEmbeddingLoss
    HuberLoss KLDivLoss L1Loss LinearCrossEntropyLoss MSELoss MarginRankingLoss MultiLabelMarginLoss
    MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss NLLLoss2d PoissonNLLLoss SmoothL1Loss SoftMarginLoss
    TripletMarginLoss TripletMarginWithDistanceLoss""".split()
)

FUNCTIONAL_LOSSES = frozenset(
    """cross_entropy nll_loss mse_loss l1_loss binary_cross_entropy
    binary_cross_entropy_with_logits kl_div smooth_l1_loss huber_loss
    cosine_embedding_loss margin_ranking_loss triplet_margin_loss
    triplet_margin_with_distance_loss ctc_loss poisson_nll_loss gaussian_nll_loss
    hinge_embedding_loss multilabel_margin_loss soft_margin_loss multi_margin_loss
    multilabel_soft_margin_loss""".split()
)

# `X.from_pretrained(...)` builds a model only for model classes, not tokenizers.
PRETRAINED_NOT_MODELS = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "Scheduler", "Pipeline")

# numpy functions that convert their tensor arguments with __array__ (and so
# raise on a tensor that requires grad); checked with torch 2.13 in tests/runtime.
NUMPY_CONVERTERS = frozenset(
    """array asarray asanyarray ascontiguousarray copy concatenate stack vstack
    hstack log log10 log2 log1p exp expm1 sqrt square abs absolute sin cos tan
    tanh exp2 negative reciprocal argmax argmin median average""".split()
)
# numpy functions that do not convert (they read .shape or just test the type).
NUMPY_NON_CONVERTING = frozenset("isscalar shape ndim size iterable isrealobj result_type".split())

# Calls that run backward on their argument(s).
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})
# The same as a file may spell them before any import is resolved (`torch.autograd.grad`, `autograd.grad`)
BACKWARD_SPELLINGS = BACKWARD_FUNCTIONS | frozenset(q.removeprefix("torch.") for q in BACKWARD_FUNCTIONS)
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})  # loss.backward(), accelerator.backward(loss)
# Methods on an unknown receiver whose meaning depends on its type (a tensor's `clone()` or
# `numpy()`, a list's `append()`, an in-place `add_()`): only these make the type layer ask
# jedi about the receiver. `sampler.set_epoch()` or `path.exists()` change no rule's decision.
RECEIVER_QUESTIONS = frozenset(
    "clone detach numpy item tolist to cpu cuda backward register_hook append extend insert appendleft".split()
)

# Lightning hooks the framework already runs under no_grad.
NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})
# Methods a training framework (Lightning and its look-alikes) calls once per batch.
FRAMEWORK_STEPS = frozenset({"training_step"}) | NO_GRAD_HOOKS
# Steps whose returned loss the framework back-propagates (Lightning's automatic optimization).
BACKPROPAGATED_RETURNS = frozenset({"training_step"})
# Calls that hand a model to a framework's training loop, in a file with no `.backward()` of its own:
# ignite's `create_supervised_trainer(model, opt, loss)`, a `Trainer(...)` (Lightning, Hugging Face,
# and their subclasses: `Seq2SeqTrainer(...)`), and a Keras-style `.fit(...)` (skorch, poutyne, torchbearer)
FRAMEWORK_TRAINERS = frozenset({"create_supervised_trainer", "Trainer"})  # a name ending so, called
FRAMEWORK_TRAINING_METHODS = frozenset({"fit", "fit_generator"})


# `*_` methods that change no values: allowed on leaves, invisible to aliases.
# In-place ops that compute from the tensor's own values (not fills or copies into it).
ARITHMETIC_INPLACE = frozenset(
    """add_ sub_ mul_ div_ true_divide_ floor_divide_ pow_ sqrt_ rsqrt_ exp_ log_ abs_ neg_ reciprocal_
    clamp_ clamp_min_ clamp_max_ clip_ sigmoid_ tanh_ relu_ addcmul_ addcdiv_ lerp_ round_ floor_ ceil_
    sign_ square_ remainder_ fmod_ nan_to_num_""".split()
)
NON_WRITING_INPLACE = frozenset({"requires_grad_", "detach_", "share_memory_", "retain_grad_"})


# In-place methods that fold their tensor operand into the receiver and keep its graph on it: the
# method form of `total += loss` (`total.add_(loss)`, an EMA's `avg.lerp_(loss, 0.1)`).
ACCUMULATING_INPLACE = frozenset({"add_", "sub_", "lerp_", "addcmul_", "addcdiv_"})


def is_inplace_method(name: str) -> bool:
    """`add_`, `mul_`, `copy_` ... (rules.md: any `*_` method that writes); not dunders."""
    return name.endswith("_") and not name.startswith("_") and name not in NON_WRITING_INPLACE


# Methods of a model from another file that run (part of) its forward: `model.encode(x)`,
# `critic.get_value(obs)`. Not `get_action()` or `predict()` (their results are often sampled
# or argmax-ed: no graph, and GG401 would claim a crash), not `get_input_embeddings()` (a module)
# nor `register_forward_pre_hook()`: the verb must lead the name.
FORWARD_VERBS = ("encode", "decode", "embed", "forward_features", "extract_features", "get_value", "get_logits")


def forward_like(method: str) -> bool:
    """`encode`, `encode_image`, `decode_latents`, `get_value`, `forward_features`."""
    name = method.lower()
    return any(name == verb or name.startswith(verb + "_") for verb in FORWARD_VERBS)


# torch functions applied element by element: a 0-dim input gives a 0-dim result.
ELEMENTWISE = frozenset(
    """abs neg exp log log1p log2 log10 sqrt rsqrt sigmoid tanh relu sin cos square clamp clip
    pow mul add sub div true_divide maximum minimum sign floor ceil round""".split()
)


# Methods torch's own objects have (tensors, modules, optimizers, autograd Functions): a class of the
# file that also defines one (`backward` of a custom autograd.Function, micrograd's `Value.backward`)
# cannot be told from torch's objects by it.
TORCH_METHOD_NAMES = (
    NEVER_GRAD_METHODS | NUMBER_METHODS | VIEW_METHODS | SAME_GRAD_METHODS_RETURN_SELF_KIND | SCALAR_REDUCTIONS
    | MODULE_SELF_METHODS | ARITHMETIC_INPLACE | NON_WRITING_INPLACE | BACKWARD_METHODS | frozenset(TUPLE_RESULTS)
    | frozenset("""forward backward apply parameters named_parameters modules named_modules children
    named_children buffers named_buffers state_dict load_state_dict zero_grad step add_param_group
    register_buffer register_parameter register_forward_hook register_full_backward_hook register_hook
    register_module add_module extra_repr reset_parameters setup_context vmap jvp mark_dirty
    save_for_backward split chunk unbind gather scatter index_select masked_fill softmax log_softmax
    sigmoid tanh relu exp log abs sqrt pow matmul mm bmm add sub mul div""".split())
)

# What a function's code names when it uses autograd itself (a callee guessed by name must not
# make its own backward look like one under no_grad)
AUTOGRAD_NAMES = frozenset({"backward", "grad", "requires_grad", "requires_grad_"})

# Classes of plain records: calling one makes a tuple of its arguments (an RL transition, a
# spiking neuron's state), whose items carry whatever graphs the arguments carry.
RECORD_CLASSES = frozenset({"collections.namedtuple", "typing.NamedTuple"})


# torch.distributions: a distribution built from tensors (`Categorical(probs)`, `Normal(mu, std)`)
# carries their graph in its parameters. `sample()` runs under no_grad (an integer for the discrete
# ones): never a graph; `rsample()` (reparameterised), `log_prob()`, `entropy()`, `cdf()` are
# differentiable in the parameters.
DISTRIBUTIONS = "torch.distributions."
DISTRIBUTION_NEVER_GRAD = frozenset({"sample", "sample_n", "enumerate_support"})
DISTRIBUTION_GRAD = frozenset({"rsample", "log_prob", "entropy", "cdf", "icdf", "perplexity"})
