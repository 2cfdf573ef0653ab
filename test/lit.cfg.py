# lit configuration for weft's IR and tool tests.
import os
import shutil

import lit.formats

config.name = "weft"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.weft_obj_root, "test")

# Our tools first, then FileCheck and friends from LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [config.weft_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.substitutions.append(("%python", "/usr/bin/python3"))

# The report page's browser test (test/tools/weftc/report-chromium.test)
# loads it in Debian's headless chromium (scripts/setup.sh installs it):
# UNSUPPORTED where there is none. The sanitizer build leaves it out: the
# browser is not what the sanitizers check, and report.test covers weftc's
# side of the page there.
if shutil.which("chromium") and not getattr(config, "weft_sanitize", ""):
    config.available_features.add("chromium")
