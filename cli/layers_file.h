/* Which layer file names are looked up in: one rule for every verb and for convgen-bench. */
#ifndef CLI_LAYERS_FILE_H
#define CLI_LAYERS_FILE_H

/* `given` (--layers) if not NULL, else $CONVGEN_LAYERS if set and not empty, else the installed
 * layers.txt if readable, else the source tree's bench/layers.txt. */
const char *cli_layers_file_for(const char *given);

#endif
