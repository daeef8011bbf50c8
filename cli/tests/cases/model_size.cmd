# A model file over the size a bundle can hold in base64 (a sparse file:
# 200 MiB of zeros that take no disk) is refused before it is read.
% copy cli/tests/data/scored.yaml $TMP/large/scored.yaml
% sparse $TMP/large/models/risk.onnx 209715200
check $TMP/large/scored.yaml
