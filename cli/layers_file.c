#include "layers_file.h"

#include <stdlib.h>
#include <unistd.h>

#ifndef CONVGEN_SOURCE_DIR
#define CONVGEN_SOURCE_DIR "."
#endif
#ifndef CONVGEN_DATA_DIR
#define CONVGEN_DATA_DIR "/usr/local/share/convgen"
#endif

const char *cli_layers_file_for(const char *given)
{
    if (given)
        return given;
    const char *env = getenv("CONVGEN_LAYERS");
    if (env && *env)
        return env;
    return access(CONVGEN_DATA_DIR "/layers.txt", R_OK) == 0 ? CONVGEN_DATA_DIR "/layers.txt"
                                                              : CONVGEN_SOURCE_DIR "/bench/layers.txt";
}
