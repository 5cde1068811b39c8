package check

import "syscall"

// mapPopulate maps every page at once: one system call instead of a page
// fault per 4 KiB when the hash and the search first touch them.
const mapPopulate = syscall.MAP_POPULATE
