// SPDX-License-Identifier: GPL-2.0
/* Owner of the maps every probe set shares (maps.bpf.h). Loaded first; each probe object then
 * reuses these maps by fd, so all sources write one ordered stream that one reader drains.
 * No programs. */
#include "maps.bpf.h"

char LICENSE[] SEC("license") = "GPL";
