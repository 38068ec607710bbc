// slurmctld_stub.cpp - the symbols the slurmctld binary exports to job_submit plugins.
//
// Loaded by dlopen_check before job_submit_allot.so so that an RTLD_NOW load can
// prove every other undefined symbol resolves against libslurmfull.so. Never called.
#include <sys/types.h>
#include <cstdint>

extern "C" {
__attribute__((visibility("default"))) void* acct_db_conn = nullptr;
__attribute__((visibility("default"))) uint16_t accounting_enforce = 0;
__attribute__((visibility("default"))) void* copy_job_record_to_job_desc(void*)
{
    return nullptr;
}
__attribute__((visibility("default"))) bool validate_operator(uid_t)
{
    return false;
}
}
