// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/pt2_load.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "csrc/archive/pt2_model.h"
#include "csrc/archive/pt2_versions.h"
#include "csrc/model/pt2_weights.h"
#include "csrc/package/elf_check.h"
#include "csrc/package/library_hash.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// A CPU export's vector code is compiled for the exporting machine's ISA (Inductor names it
// in AOTI_CPU_ISA, and compiles with -march=native): run on a CPU without it, the first
// such instruction kills the process with SIGILL. Refused by name instead. An export whose
// metadata names no ISA ("INVALID_VEC_ISA", or none) cannot be checked.
Error check_cpu_isa(const Pt2Model& pm) {
  if (pm.device_type != DeviceType::CPU || pm.cpu_isa.empty() || pm.cpu_isa == "INVALID_VEC_ISA") return Error::Ok;
  bool has = true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (pm.cpu_isa.rfind("AVX512", 0) == 0) {
    has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
          (pm.cpu_isa.find("AVX512_VNNI") == std::string::npos || __builtin_cpu_supports("avx512vnni"));
  } else if (pm.cpu_isa == "AVX2") {
    has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  } else {
    has = false;  // VSX, NEON, SVE, ...: another architecture's
  }
#endif
  SLIMCUDA_CHECK_OR_RETURN(has, Error::NotSupported,
                           "model '%s' is compiled for %s vector instructions (AOTI_CPU_ISA), which this CPU does not "
                           "have; export it on a machine without them (or with ATEN_CPU_CAPABILITY=avx2)",
                           pm.name.c_str(), pm.cpu_isa.c_str());
  return Error::Ok;
}

// The model runs where it was compiled for, with every GPU kernel inside its library.
Error check_runnable(const Pt2Model& pm, int device_type) {
  const char* device_name = pm.device_type == DeviceType::CUDA ? "cuda" : "cpu";
  SLIMCUDA_CHECK_OR_RETURN(device_type == -1 || device_type == static_cast<int>(pm.device_type), Error::NotSupported,
                           "model '%s' is compiled for %s (AOTI_DEVICE_KEY); a .pt2 model runs on that device only",
                           pm.name.c_str(), device_name);
  // AOTInductor's GPU kernels are either inside the .so (aot_inductor.embed_kernel_binary)
  // or beside it, loaded at run time from a folder on disk: that needs extraction, which we
  // never do.
  for (const ArchiveEntry* f : pm.files) {
    for (const char* ext : {".cubin", ".fatbin", ".hsaco", ".spv"}) {
      const size_t n = std::strlen(ext);
      SLIMCUDA_CHECK_OR_RETURN(
          f->name.size() < n || f->name.compare(f->name.size() - n, n, ext) != 0, Error::NotSupported,
          "model '%s' keeps its GPU kernels beside its library (%s), loaded from a folder on disk at run time; "
          "export with inductor_configs={\"aot_inductor.embed_kernel_binary\": True} to embed them",
          pm.name.c_str(), f->name.c_str());
    }
  }
  return Error::Ok;
}

// The ops the library runs through the proxy executor, bound before the library is loaded,
// so that an op slimcuda lacks fails the load, not the first run. Nodes the library never
// calls are not read.
Error bind_extern_kernels(const Pt2Archive& archive, const Pt2Model& pm, const ArchiveSpan& so,
                          const std::string& wrapper, BindExternKernelsFn bind,
                          std::shared_ptr<const ExternKernels>* out) {
  std::vector<std::string> imports;
  SLIMCUDA_RETURN_IF_ERROR(check_elf(so.data, so.size, &imports));
  const std::string call = "aoti_torch_proxy_executor_call_function";
  bool calls = false;
  for (const std::string& name : imports) {
    calls = calls || (name.size() >= call.size() && name.compare(name.size() - call.size(), call.size(), call) == 0);
  }
  if (!calls) return Error::Ok;
  SLIMCUDA_CHECK_OR_RETURN(pm.extern_nodes != nullptr, Error::InvalidProgram,
                           "model '%s': its library runs ops through the proxy executor, but the archive has no "
                           "extern-kernel nodes (%s.json) beside it",
                           pm.name.c_str(), pm.library->name.substr(0, pm.library->name.size() - 3).c_str());
  SLIMCUDA_CHECK_OR_RETURN(bind != nullptr, Error::NotSupported,
                           "model '%s' runs ops through the proxy executor, which this loader was not given",
                           pm.name.c_str());
  std::string text;
  SLIMCUDA_RETURN_IF_ERROR(
      read_entry_text(archive, *pm.extern_nodes, kMaxExternNodesBytes, kMaxExternNodesBytes, &text));
  return bind(text, wrapper, out);
}

}  // namespace

Error load_pt2(const Pt2Archive& archive, const LoadOptions& o, std::unique_ptr<Model>* out) {
  SLIMCUDA_RETURN_IF_ERROR(Model::check_device_type(o.device_type));
  Pt2Model pm;
  SLIMCUDA_RETURN_IF_ERROR(find_pt2_model(archive, o.model_name, &pm));
  // A PyTorch slimcuda does not know is refused by name before its library is opened.
  SLIMCUDA_RETURN_IF_ERROR(check_pt2_versions(archive, pm));
  SLIMCUDA_RETURN_IF_ERROR(check_runnable(pm, o.device_type));
  SLIMCUDA_RETURN_IF_ERROR(check_cpu_isa(pm));
  // What the weights will cost is known from the directory: refused before the library is
  // inflated or loaded (docs/hostile-archives.md).
  SLIMCUDA_RETURN_IF_ERROR(check_pt2_weights_entries(archive, pm));
  std::unique_ptr<uint8_t[]> inflated;
  ArchiveSpan so;
  SLIMCUDA_RETURN_IF_ERROR(read_pt2_library(archive, pm, &inflated, &so));
  // The generated source beside the library: the input checks, and what proves a buffer
  // read-only (the model's state).
  std::string wrapper;
  SLIMCUDA_RETURN_IF_ERROR(read_wrapper_source(archive, pm, &wrapper));
  SLIMCUDA_RETURN_IF_ERROR(check_container_abi(wrapper));
  const Model::DescribeInputs describe = [&](size_t num_inputs, std::vector<TensorSpec>* specs) -> Error {
    if (pm.wrapper_source == nullptr) {
      return set_last_error(Error::NotFound, "no wrapper source in the archive");
    }
    return parse_input_checks(wrapper, num_inputs, specs);
  };
  std::shared_ptr<const ExternKernels> externs;
  SLIMCUDA_RETURN_IF_ERROR(bind_extern_kernels(archive, pm, so, wrapper, o.bind_extern_kernels, &externs));
  std::unique_ptr<Model> model;
  SLIMCUDA_RETURN_IF_ERROR(Model::load_library(so.data, so.size, pm.device_type, o.device_index, o.instances, nullptr,
                                               describe, &model, o.graphs, std::move(externs)));
  // Weights kept outside the library (docs/weights.md): uploaded before the model can run,
  // on the caller's stream when one is selected, else on the model's own; attach returns
  // once they are on the device, so any stream may run it.
  StreamContext ctx = StreamContext::unselected(-1);
  if (model->device().is_cuda() && o.caller_context != nullptr) {
    SLIMCUDA_RETURN_IF_ERROR(o.caller_context(model->device().index, &ctx));
  }
  SLIMCUDA_RETURN_IF_ERROR(attach_pt2_weights(archive, pm, &wrapper, library_hash_hex(library_hash(so.data, so.size)),
                                              model.get(), ctx, nullptr));
  // What runs write gets a copy of this load's own (docs/state.md).
  SLIMCUDA_RETURN_IF_ERROR(model->prepare_state(pm.wrapper_source != nullptr ? &wrapper : nullptr, ctx));
  *out = std::move(model);
  return Error::Ok;
}

}  // namespace slimcuda
