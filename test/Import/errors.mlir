// Every rejection names the node, the op and the reason, exits non-zero and
// never crashes; broken or hostile files give a clear message.
// RUN: rm -rf %t && mkdir -p %t/models

// RUN: %python %S/../models/gen_models.py unsupported_op %t/op.onnx
// RUN: not weft-translate --import-onnx %t/op.onnx 2>&1 | FileCheck %s --check-prefix=OP
// OP: error: node 'nz' (NonZero): operator is not supported

// An op used below the opset that defines it, and a parameter in the form
// another opset defines (the op table picks the form by opset).
// RUN: %python %S/Inputs/opset_forms.py bad_hardswish_13 %t/early.onnx
// RUN: not weft-translate --import-onnx %t/early.onnx 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: error: node 'n' (HardSwish): operator is not supported at opset 13 (weft imports it from opset 14)
// RUN: %python %S/Inputs/opset_forms.py bad_reduce_sum_13_attribute %t/form-attr.onnx
// RUN: not weft-translate --import-onnx %t/form-attr.onnx 2>&1 | FileCheck %s --check-prefix=FORM-ATTR
// FORM-ATTR: error: node 'n' (ReduceSum): 'axes' is input #1 at opset 13, not an attribute
// RUN: %python %S/Inputs/opset_forms.py bad_reduce_sum_11_input %t/form-input.onnx
// RUN: not weft-translate --import-onnx %t/form-input.onnx 2>&1 | FileCheck %s --check-prefix=FORM-INPUT
// FORM-INPUT: error: node 'n' (ReduceSum): 'axes' is an attribute at opset 11, not input #1

// RUN: %python %S/../models/gen_models.py unsupported_attr %t/attr.onnx
// RUN: not weft-translate --import-onnx %t/attr.onnx 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: error: node 'relu_odd' (Relu): attribute 'flavour' is not supported

// RUN: %python %S/../models/gen_models.py bad_autopad %t/autopad.onnx
// RUN: not weft-translate --import-onnx %t/autopad.onnx 2>&1 | FileCheck %s --check-prefix=AUTOPAD
// AUTOPAD: error: node 'conv_weird' (Conv): auto_pad 'SIDEWAYS' is not supported

// RUN: %python %S/../models/gen_models.py dynamic_dim %t/dyn.onnx
// RUN: not weft-translate --import-onnx %t/dyn.onnx 2>&1 | FileCheck %s --check-prefix=DYN
// DYN: error: graph input 'x': dimension 1 ('width') is dynamic; only the leading (batch) dimension may be symbolic

// RUN: %python %S/../models/gen_models.py bad_dtype %t/dtype.onnx
// RUN: not weft-translate --import-onnx %t/dtype.onnx 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: graph input 'x': element type COMPLEX64 is not supported

// RUN: %python %S/../models/gen_models.py shape_mismatch %t/bcast.onnx
// RUN: not weft-translate --import-onnx %t/bcast.onnx 2>&1 | FileCheck %s --check-prefix=BCAST
// BCAST: error: node 'add_bad' (Add): shapes 4 and 2x3 do not broadcast

// RUN: %python %S/../models/gen_models.py short_raw_data %t/short.onnx
// RUN: not weft-translate --import-onnx %t/short.onnx 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: initializer 'w': raw_data holds 20 bytes, dims x dtype need 64

// RUN: %python %S/../models/gen_models.py huge_dims %t/huge.onnx
// RUN: not weft-translate --import-onnx %t/huge.onnx 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: initializer 'w': dims have a negative entry or more than 2^40 elements

// RUN: %python %S/../models/gen_models.py escaping_external %t/models/escape.onnx
// RUN: not weft-translate --import-onnx %t/models/escape.onnx 2>&1 | FileCheck %s --check-prefix=ESCAPE
// ESCAPE: error: initializer 'w': external data path '../../etc/passwd' leaves the model's directory

// RUN: %python %S/../models/gen_models.py absolute_external %t/models/abs.onnx
// RUN: not weft-translate --import-onnx %t/models/abs.onnx 2>&1 | FileCheck %s --check-prefix=ABS
// ABS: error: initializer 'w': external data path '/etc/passwd' is absolute; it must stay inside the model's directory

// A symlink inside the directory that points outside is refused too.
// RUN: %python %S/../models/gen_models.py escaping_external %t/models/link.onnx
// RUN: ln -sf /etc/passwd %t/models/passwd
// RUN: %python -c "import onnx,sys; m=onnx.load(sys.argv[1], load_external_data=False); m.graph.initializer[0].external_data[0].value='passwd'; onnx.save(m, sys.argv[1])" %t/models/link.onnx
// RUN: not weft-translate --import-onnx %t/models/link.onnx 2>&1 | FileCheck %s --check-prefix=LINK
// LINK: error: initializer 'w': external data path 'passwd' resolves outside the model's directory (symlink?)

// RUN: %python %S/../models/gen_models.py truncated %t/trunc.onnx
// RUN: not weft-translate --import-onnx %t/trunc.onnx 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: error: cannot read ONNX model: not a valid ONNX protobuf (malformed or truncated)

// RUN: %python %S/../models/gen_models.py not_onnx %t/junk.onnx
// RUN: not weft-translate --import-onnx %t/junk.onnx 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: error: cannot read ONNX model: not a valid ONNX protobuf (malformed or truncated)

// RUN: touch %t/empty.onnx
// RUN: not weft-translate --import-onnx %t/empty.onnx 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: cannot read ONNX model: empty file is not an ONNX model
