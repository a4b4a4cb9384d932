/* numoracle CLI: TOML to cJSON (toml_json.cpp, built when toml++ is found). */
#ifndef NMO_CLI_TOML_JSON_H
#define NMO_CLI_TOML_JSON_H
#include <stddef.h>

#include <cjson/cJSON.h>

/* Parse TOML text (path names it in messages) into a cJSON object; NULL with err set
 * ("PATH: not valid TOML (line L, column C): ...") on failure. */
cJSON *cli_toml_parse(const char *text, const char *path, char *err, size_t errn);

#endif
