// libsystemd for Swift: reading the journal (sd-journal) and the boot and unit identifiers.
// Only the SystemJournal module imports it.
#ifndef VITRINE_CSYSTEMD_SHIM_H
#define VITRINE_CSYSTEMD_SHIM_H
#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-login.h>
#endif
