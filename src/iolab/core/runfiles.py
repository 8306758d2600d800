"""Names of the files a workload directory holds and a run directory keeps of them: the
suites write them, reports and resume read them, and neither may import the other."""

ANALYSIS_FILE = "analysis.json"
COMPOSITE_FILE = "composite.toml"
REPLAY_FILE = "replay.toml"
INPUTS_DIR = "inputs"  # inside a run directory: the input files as they were when the run started
