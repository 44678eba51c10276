# The fuzz targets and the library each one links, shared by the libFuzzer build (CMakeLists.txt)
# and the corpus replays of the normal build (replay.cmake). Target <name> is fuzz/fuzz_<name>.cpp,
# and its seed corpus is fuzz/corpus/<name>/.
set(WITNESS_FUZZ_TARGETS constraints csv http keras_h5 lightgbm_text mlp_json nnet onnx query report_json schema_toml
    search_state xgboost_json xgboost_ubj)
set(WITNESS_FUZZ_LIBS_constraints witness_domain)
set(WITNESS_FUZZ_LIBS_csv witness_domain)
set(WITNESS_FUZZ_LIBS_http witness_server)
set(WITNESS_FUZZ_LIBS_keras_h5 witness_model)
set(WITNESS_FUZZ_LIBS_lightgbm_text witness_model)
set(WITNESS_FUZZ_LIBS_mlp_json witness_model)
set(WITNESS_FUZZ_LIBS_nnet witness_model)
set(WITNESS_FUZZ_LIBS_onnx witness_model)
set(WITNESS_FUZZ_LIBS_query witness_query)
set(WITNESS_FUZZ_LIBS_report_json witness_report)
set(WITNESS_FUZZ_LIBS_schema_toml witness_domain)
set(WITNESS_FUZZ_LIBS_search_state witness_fairness)
set(WITNESS_FUZZ_LIBS_xgboost_json witness_model)
set(WITNESS_FUZZ_LIBS_xgboost_ubj witness_model)
