/* Fuzz target: the layer parser (generator/layer.h). Each line of the input goes through
 * cg_layer_parse_line and, where it is a layer, cg_problem_init as every caller does next; the
 * whole input also goes through cg_layer_read_file as a file (an in-memory one, memfd). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "layer.h"
#include "problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_lines(const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        char *line = malloc(n + 1);
        if (!line)
            return;
        memcpy(line, p, n);
        line[n] = '\0';
        cg_layer layer;
        int is_layer = -1;
        if (cg_layer_parse_line(line, &layer, &is_layer) == CONVGEN_SUCCESS && is_layer) {
            cg_problem problem;
            (void)cg_problem_init(&problem, &layer.desc);
        }
        free(line);
        p += n + (p[n] == '\n');
    }
}

static void parse_file(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-layers", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        cg_layer *layers = NULL;
        int count = -1;
        if (cg_layer_read_file(path, &layers, &count) == CONVGEN_SUCCESS && count > 0 && !layers)
            abort();
        free(layers);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    parse_lines(text);
    free(text);
    parse_file(data, size);
    return 0;
}
