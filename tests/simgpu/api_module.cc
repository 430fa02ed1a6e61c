// Modules, build logs and kernels. Module "compilation" is parsing the simulated module format
// (module_format.h); a kernel is a name plus the duration it will occupy the engine.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "api.h"
#include "config.h"
#include "objects.h"
#include "sync.h"

namespace simze::api {
namespace {

constexpr uint32_t kMaxGroupSize = 1024;  // matches maxTotalGroupSize in the device properties

// Level Zero's size/buffer idiom for strings: no buffer asks for the size (with terminator).
template <typename Size>
ze_result_t copy_string(const std::string& s, Size* pSize, char* out) {
  if (pSize == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const Size needed = static_cast<Size>(s.size() + 1);
  if (out == nullptr) {
    *pSize = needed;
    return ZE_RESULT_SUCCESS;
  }
  if (*pSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  size_t n = std::min<size_t>(s.size(), static_cast<size_t>(*pSize) - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *pSize = needed;
  return ZE_RESULT_SUCCESS;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// Largest divisor of `global` that is at most `limit`: a group size that tiles it exactly.
uint32_t largest_divisor_up_to(uint32_t global, uint32_t limit) {
  if (global == 0) return 1;
  for (uint32_t d = std::min(global, limit); d > 1; --d) {
    if (global % d == 0) return d;
  }
  return 1;
}

}  // namespace

ze_result_t ModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                         const ze_module_desc_t* desc, ze_module_handle_t* phModule,
                         ze_module_build_log_handle_t* phBuildLog) {
  Context* ctx = from_handle<Context>(hContext);
  Device* dev = from_handle<Device>(hDevice);
  if (ctx == nullptr || dev == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || phModule == nullptr || desc->pInputModule == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE) {
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;

  ParsedModule parsed = parse_module(desc->pInputModule, desc->inputSize);
  if (phBuildLog != nullptr) {
    auto* log = new BuildLog;
    log->text = parsed.error;  // empty on success, as a clean compile's log is
    *phBuildLog = to_handle<ze_module_build_log_handle_t>(log);
  }
  if (!parsed.error.empty()) {
    *phModule = nullptr;
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }

  auto* m = new Module;
  m->context = ctx;
  m->device = dev;
  m->simulated = parsed.simulated;
  m->binary.assign(desc->pInputModule, desc->pInputModule + desc->inputSize);
  for (KernelSpec& k : parsed.kernels) {
    auto spec = std::make_shared<const KernelSpec>(std::move(k));
    auto [it, inserted] = m->kernels.emplace(spec->name, spec);
    (void)inserted;  // the parser rejects duplicates
    m->names.push_back(it->second->name.c_str());
  }
  *phModule = to_handle<ze_module_handle_t>(m);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleDestroy(ze_module_handle_t hModule) {
  Module* m = from_handle<Module>(hModule);
  if (m == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete m;  // kernels and recorded launches share their specs, so they stay usable
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleDynamicLink(uint32_t numModules, ze_module_handle_t* phModules,
                              ze_module_build_log_handle_t* phLinkLog) {
  for (uint32_t i = 0; i < numModules; ++i) {
    if (phModules == nullptr || from_handle<Module>(phModules[i]) == nullptr) {
      return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
  }
  if (phLinkLog != nullptr) *phLinkLog = to_handle<ze_module_build_log_handle_t>(new BuildLog);
  return ZE_RESULT_SUCCESS;  // simulated modules have no imports to resolve
}

ze_result_t ModuleGetNativeBinary(ze_module_handle_t hModule, size_t* pSize,
                                  uint8_t* pModuleNativeBinary) {
  Module* m = from_handle<Module>(hModule);
  if (m == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pSize == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (pModuleNativeBinary != nullptr) {
    std::memcpy(pModuleNativeBinary, m->binary.data(), std::min(*pSize, m->binary.size()));
  }
  *pSize = m->binary.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleGetGlobalPointer(ze_module_handle_t hModule, const char* pGlobalName, size_t*,
                                   void**) {
  if (from_handle<Module>(hModule) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pGlobalName == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;  // simulated modules declare no globals
}

ze_result_t ModuleGetKernelNames(ze_module_handle_t hModule, uint32_t* pCount, const char** pNames) {
  Module* m = from_handle<Module>(hModule);
  if (m == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pCount == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Opaque modules cannot be inspected: they list no kernels (yet accept any name).
  const auto available = static_cast<uint32_t>(m->names.size());
  if (*pCount == 0 || pNames == nullptr) {
    *pCount = available;
    return ZE_RESULT_SUCCESS;
  }
  *pCount = std::min(*pCount, available);
  std::copy_n(m->names.begin(), *pCount, pNames);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleGetProperties(ze_module_handle_t hModule, ze_module_properties_t* props) {
  if (from_handle<Module>(hModule) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (props == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  props->flags = 0;  // no unresolved imports
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleGetFunctionPointer(ze_module_handle_t hModule, const char* pFunctionName, void**) {
  if (from_handle<Module>(hModule) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pFunctionName == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
}

ze_result_t ModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog) {
  BuildLog* log = from_handle<BuildLog>(hModuleBuildLog);
  if (log == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete log;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize,
                                    char* pBuildLog) {
  BuildLog* log = from_handle<BuildLog>(hModuleBuildLog);
  if (log == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return copy_string(log->text, pSize, pBuildLog);
}

ze_result_t KernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc,
                         ze_kernel_handle_t* phKernel) {
  Module* m = from_handle<Module>(hModule);
  if (m == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || desc->pKernelName == nullptr || phKernel == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  std::shared_ptr<const KernelSpec> spec;
  {
    std::lock_guard lock(m->mu);
    auto it = m->kernels.find(std::string_view(desc->pKernelName));
    if (it != m->kernels.end()) {
      spec = it->second;
    } else if (m->simulated) {
      return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    } else {
      // An opaque module (e.g. real SPIR-V) is trusted to contain whatever the program asks for.
      spec = std::make_shared<const KernelSpec>(
          KernelSpec{desc->pKernelName, config().default_kernel_ns});
      m->kernels.emplace(spec->name, spec);
    }
  }
  auto* k = new Kernel;
  k->module = m;
  k->spec = std::move(spec);
  *phKernel = to_handle<ze_kernel_handle_t>(k);
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelDestroy(ze_kernel_handle_t hKernel) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete k;
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelSetCacheConfig(ze_kernel_handle_t hKernel, ze_cache_config_flags_t) {
  return from_handle<Kernel>(hKernel) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                                 : ZE_RESULT_SUCCESS;
}

ze_result_t KernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y, uint32_t z) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > kMaxGroupSize) {
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  }
  k->group_size[0] = x;
  k->group_size[1] = y;
  k->group_size[2] = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelSuggestGroupSize(ze_kernel_handle_t hKernel, uint32_t globalX, uint32_t globalY,
                                   uint32_t globalZ, uint32_t* groupX, uint32_t* groupY,
                                   uint32_t* groupZ) {
  if (from_handle<Kernel>(hKernel) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (groupX == nullptr || groupY == nullptr || groupZ == nullptr) {
    return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  }
  // Fill X first, then Y, then Z, keeping the product within the device limit.
  *groupX = largest_divisor_up_to(globalX, kMaxGroupSize);
  *groupY = largest_divisor_up_to(globalY, kMaxGroupSize / *groupX);
  *groupZ = largest_divisor_up_to(globalZ, kMaxGroupSize / (*groupX * *groupY));
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelSuggestMaxCooperativeGroupCount(ze_kernel_handle_t hKernel,
                                                  uint32_t* totalGroupCount) {
  if (from_handle<Kernel>(hKernel) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (totalGroupCount == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *totalGroupCount = 64 * 8;  // one group per EU: sub-slices x EUs per sub-slice
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t, size_t, const void*) {
  // Simulated kernels compute nothing, so any argument is acceptable.
  return from_handle<Kernel>(hKernel) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                                 : ZE_RESULT_SUCCESS;
}

ze_result_t KernelSetIndirectAccess(ze_kernel_handle_t hKernel,
                                    ze_kernel_indirect_access_flags_t flags) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  k->indirect_access = flags;
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelGetIndirectAccess(ze_kernel_handle_t hKernel,
                                    ze_kernel_indirect_access_flags_t* pFlags) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pFlags == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *pFlags = k->indirect_access;
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelGetSourceAttributes(ze_kernel_handle_t hKernel, uint32_t* pSize, char** pString) {
  if (from_handle<Kernel>(hKernel) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pSize == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // No attributes: an empty string. The spec has the caller pass storage via *pString.
  if (pString == nullptr || *pString == nullptr) {
    *pSize = 1;
    return ZE_RESULT_SUCCESS;
  }
  return copy_string(std::string(), pSize, *pString);
}

ze_result_t KernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t* p) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  p->numKernelArgs = 0;  // the simulated format declares no arguments
  p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
  p->requiredNumSubGroups = 0;
  p->requiredSubgroupSize = 0;
  p->maxSubgroupSize = 32;
  p->maxNumSubgroups = 64;
  p->localMemSize = 0;
  p->privateMemSize = 0;
  p->spillMemSize = 0;
  std::memset(&p->uuid, 0, sizeof p->uuid);
  const uint64_t name_hash = fnv1a(k->spec->name);
  const auto module_id = reinterpret_cast<uintptr_t>(k->module);
  std::memcpy(p->uuid.kid, &name_hash, sizeof name_hash);
  std::memcpy(p->uuid.mid, &module_id, sizeof module_id);
  return ZE_RESULT_SUCCESS;
}

ze_result_t KernelGetName(ze_kernel_handle_t hKernel, size_t* pSize, char* pName) {
  Kernel* k = from_handle<Kernel>(hKernel);
  if (k == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (config().kernel_name_unsupported) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
  if (const uint64_t ms = config().kernel_name_delay_ms) {
    std::unique_lock<std::mutex> lock;
    if (config().kernel_name_locked) lock = std::unique_lock(sync::mutex());
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  return copy_string(k->spec->name, pSize, pName);
}

ze_result_t KernelSetGlobalOffsetExp(ze_kernel_handle_t hKernel, uint32_t, uint32_t, uint32_t) {
  return from_handle<Kernel>(hKernel) == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE
                                                 : ZE_RESULT_SUCCESS;
}

ze_result_t KernelSchedulingHintExp(ze_kernel_handle_t hKernel, ze_scheduling_hint_exp_desc_t* pHint) {
  if (from_handle<Kernel>(hKernel) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return pHint == nullptr ? ZE_RESULT_ERROR_INVALID_NULL_POINTER : ZE_RESULT_SUCCESS;
}

}  // namespace simze::api
