/* Compile-time checks of the layouts BPF and user space share. Each shared header states its
 * structs' sizes and the offsets that padding could move with XT_LAYOUT; the header is compiled
 * by clang -target bpf (as C) and by the C++ compilers, so every side checks the same numbers
 * and a field moved, widened or padded differently on one side fails the build instead of
 * being misread at run time.
 *
 * Plain C, no libc: builtins only.
 */
#ifndef XTRACE_LAYOUT_CHECK_H
#define XTRACE_LAYOUT_CHECK_H

#ifdef __cplusplus
#define XT_LAYOUT(cond) static_assert(cond, #cond)
#else
#define XT_LAYOUT(cond) _Static_assert(cond, #cond)
#endif

#define XT_SIZE(type) sizeof(struct type)
#define XT_OFFSET(type, field) __builtin_offsetof(struct type, field)

#endif /* XTRACE_LAYOUT_CHECK_H */
