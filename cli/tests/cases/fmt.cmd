# `rulec fmt`: stdin to stdout; files in place; --check lists what it
# would change and exits 1; a file that is not YAML is reported, untouched.
fmt < frontend/tests/format/indentation_is_two_spaces.before.yaml
fmt --check frontend/tests/format/indentation_is_two_spaces.after.yaml frontend/tests/format/blank_lines_are_kept_once.after.yaml
% copy frontend/tests/format/indentation_is_two_spaces.before.yaml $TMP/rules/indent.yaml
% copy frontend/tests/format/blank_lines_are_kept_once.after.yaml $TMP/rules/blank.yaml
fmt --check $TMP/rules
fmt $TMP/rules
% show $TMP/rules/indent.yaml
fmt --check $TMP/rules
% copy frontend/tests/fixtures/err/E0001_yaml_syntax.yaml $TMP/broken.yaml
fmt $TMP/broken.yaml
fmt --format json $TMP/broken.yaml
% show $TMP/broken.yaml
fmt --check < frontend/tests/fixtures/err/E0001_yaml_syntax.yaml
fmt $TMP/missing.yaml
