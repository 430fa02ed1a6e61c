/* Probes on a Level Zero loader's and driver's zeGet*ProcAddrTable exports (ze_probes.bpf.c,
 * ze_table_getter_entry; capture/sources/ze_source.cc attaches them). The loader calls its own
 * getters too, to fill its dispatch at zeInit, so the program tells an application's call by
 * its return address: outside the loader's executable segment, which the cookie bounds around
 * the probed function — bytes before the function's entry in the low 32 bits, from its entry
 * to the segment's end in the high 32. A driver's getters have no bounds (cookie 0): the loader
 * calls them inside its zeInit, told apart by the call under way.
 *
 * Plain C with __u32/__u64 only: compiled by clang -target bpf and by C++.
 */
#ifndef XTRACE_ZE_TABLES_H
#define XTRACE_ZE_TABLES_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define XT_ZE_TABLE_COOKIE(before, from) (((__u64)(from) << 32) | (__u32)(before))
#define XT_ZE_TABLE_COOKIE_BEFORE(c) ((__u64)(__u32)(c))
#define XT_ZE_TABLE_COOKIE_FROM(c) ((__u64)(c) >> 32)

/* Processes that took a table, in the table_takers map: more are forgotten oldest first (an
 * LRU map), and a forgotten one is probed no more at its later scans. */
#define XT_MAX_TABLE_TAKERS 4096

#endif /* XTRACE_ZE_TABLES_H */
