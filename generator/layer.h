/* Layers written as lines of bench/layers.txt:
 *     name  n  c  k  input  kernel  pad  stride  [note...]
 * e.g. "L2 128 64 64 64x64 9x9 0 1", input and kernel "HxW" or "DxHxW", pad and stride for
 * every spatial dimension. The name may be left out when the line starts with n. */
#ifndef CG_LAYER_H
#define CG_LAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"

typedef struct cg_layer {
    char name[32];
    char note[96];
    convgen_conv_desc desc;
} cg_layer;

/* The one integer parser of layer files and of the CLI: digits with an optional leading '-',
 * nothing else (no blanks, '+' or suffix), from min to max (overflow is out of range). */
bool cg_parse_integer(const char *text, int64_t min, int64_t max, int64_t *out);

/* Parses the words of one layer (argv-style). *used is how many words it took (the note is
 * not taken: words after stride are left to the caller). Errors name the word. */
convgen_status cg_layer_parse_words(const char *const *words, int count, cg_layer *layer, int *used);

/* Parses a file line of any length; sets *is_layer = 0 for blank and comment lines. The name
 * is an identifier (letters, digits, '_', '-', '.'; no leading '.') of at most 31 characters;
 * sizes are from 1 (pad from 0) to 2^31 - 1. Nothing is cut: too long is an error. */
convgen_status cg_layer_parse_line(const char *line, cg_layer *layer, int *is_layer);

/* Reads a layer file (a regular file of at most 16 MiB): *layers is malloc'ed. Errors name the
 * file and line. */
convgen_status cg_layer_read_file(const char *path, cg_layer **layers, int *count);

/* Parses "64x64" into up to CONVGEN_MAX_RANK sizes; returns the rank or 0 if malformed. */
int cg_parse_dims(const char *text, int64_t out[CONVGEN_MAX_RANK]);

#endif
