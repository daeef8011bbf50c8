# A model file is read inside the contract's folder, links followed.
# A link to a file outside the folder is refused (it would carry any file
# the compiler can read into the bundle), by `check` and by `compile`.
% copy examples/contracts/models/fraud.onnx $TMP/outside/risk.onnx
% copy cli/tests/data/scored.yaml $TMP/file/scored.yaml
% symlink $TMP/outside/risk.onnx $TMP/file/models/risk.onnx
check $TMP/file/scored.yaml
compile $TMP/file/scored.yaml -o $TMP/out
# So is a linked folder on the way.
% copy cli/tests/data/scored.yaml $TMP/folder/scored.yaml
% symlink $TMP/outside $TMP/folder/models
check $TMP/folder/scored.yaml
compile $TMP/folder/scored.yaml -o $TMP/out
# A link that stays inside the folder is followed.
% copy cli/tests/data/scored.yaml $TMP/inside/scored.yaml
% copy examples/contracts/models/fraud.onnx $TMP/inside/versions/risk-v2.onnx
% symlink ../versions/risk-v2.onnx $TMP/inside/models/risk.onnx
check $TMP/inside/scored.yaml
compile $TMP/inside/scored.yaml -o $TMP/out
