import sys
from pathlib import Path

# tests/ holds shared helpers (examples.py) imported by test modules.
sys.path.insert(0, str(Path(__file__).parent))
