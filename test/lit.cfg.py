# lit configuration for weft's IR and tool tests.
import os
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
