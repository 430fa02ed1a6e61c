# Builds BPF objects with clang and turns them into libbpf skeleton headers with bpftool.
#
#   xtrace_bpf_skeleton(<name> <source.bpf.c>)
#
# produces ${CMAKE_BINARY_DIR}/bpf/<name>.skel.h and an INTERFACE target xtrace_bpf_<name>
# that puts it on the include path. vmlinux.h is generated once from the running kernel's BTF.

find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

set(XTRACE_BPF_OUT ${CMAKE_BINARY_DIR}/bpf)
file(MAKE_DIRECTORY ${XTRACE_BPF_OUT})

# The kernel's own BTF describes its types exactly; prefer it, fall back to a pinned copy so
# a build on a kernel without BTF still works (CO-RE relocates at load time either way).
set(XTRACE_VMLINUX_H ${XTRACE_BPF_OUT}/vmlinux.h)
if(EXISTS /sys/kernel/btf/vmlinux)
  add_custom_command(
    OUTPUT ${XTRACE_VMLINUX_H}
    COMMAND ${BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c > ${XTRACE_VMLINUX_H}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${XTRACE_VMLINUX_H}.tmp ${XTRACE_VMLINUX_H}
    COMMENT "Generating vmlinux.h from /sys/kernel/btf/vmlinux"
    VERBATIM)
  # A custom command's output is visible only to targets of its own directory; the skeletons
  # are built in bpf/, so they depend on this target instead of the file.
  add_custom_target(xtrace_vmlinux_h DEPENDS ${XTRACE_VMLINUX_H})
else()
  message(FATAL_ERROR "/sys/kernel/btf/vmlinux is missing: xtrace needs a kernel built with CONFIG_DEBUG_INFO_BTF")
endif()

function(xtrace_bpf_skeleton name source)
  set(obj ${XTRACE_BPF_OUT}/${name}.bpf.o)
  set(skel ${XTRACE_BPF_OUT}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_x86
            -Wall -Werror -Wno-unused-function
            -I/usr/include/x86_64-linux-gnu -I${XTRACE_BPF_OUT}
            -I${CMAKE_SOURCE_DIR}/include -I${CMAKE_CURRENT_SOURCE_DIR}
            -MD -MF ${obj}.d -c ${source} -o ${obj}
    # Every header the object includes, from the compiler: a hand-kept list misses some.
    DEPFILE ${obj}.d
    DEPENDS ${source} xtrace_vmlinux_h
    COMMENT "BPF ${name}.bpf.o"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${skel}.tmp ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(xtrace_bpf_${name}_gen DEPENDS ${skel})
  add_library(xtrace_bpf_${name} INTERFACE)
  add_dependencies(xtrace_bpf_${name} xtrace_bpf_${name}_gen)
  target_include_directories(xtrace_bpf_${name} INTERFACE ${XTRACE_BPF_OUT})
endfunction()
