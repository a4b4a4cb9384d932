/* A shared object without nmo_plugin_query, for the plugin loader's refusal. Not
 * libnumoracle.so itself: loading that into a binary that links the library statically
 * defines its globals twice (an ODR violation ASan reports as a crash). */
int nmo_test_not_a_plugin = 1;
