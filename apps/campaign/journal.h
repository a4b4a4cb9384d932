/* numoracle campaign: journal integrity (journal.c). */
#ifndef NMO_CAMPAIGN_JOURNAL_H
#define NMO_CAMPAIGN_JOURNAL_H
#include <stddef.h>
/* Exclusive, non-blocking lock on the open journal: 0, or -1 when another holds it. */
int nmo_camp_journal_lock(int fd);
/* Check every complete line of text: a JSON object with a known "type", an "id" where
 * the type has one, no run or probe id twice. 0 when clean, else the first damaged
 * line's number (1-based) with why in why. */
long nmo_camp_journal_verify(const char *text, char *why, size_t nwhy);
#endif
