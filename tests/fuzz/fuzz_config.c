/* Fuzz the campaign config parser: every config loads or is refused with a message. */
#include "fuzz_common.h"
#include "campaign/campaign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char p[600];
    snprintf(p, sizeof p, "%s/c.json", fuzz_dir());
    fuzz_write(p, data, size);
    nmo_camp_cfg cfg;
    nmo_err e;
    e.msg[0] = '\0';
    /* the caller frees after a failed load too (as cmd_campaign does) */
    if (nmo_camp_cfg_load(&cfg, p, NULL, &e) != NMO_OK && !e.msg[0]) abort();
    nmo_camp_cfg_free(&cfg);
    return 0;
}
