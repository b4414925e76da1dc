/* Replays a fuzz target's corpus (tests/fuzz/corpus/<target>/, the seeds and every crash
 * reproducer found so far) through its LLVMFuzzerTestOneInput, as a CMocka test so `ninja test`
 * runs it: built with the ordinary compiler, no clang or libFuzzer needed, each file once, in
 * name order. A finding that comes back fails the test (or crashes it). FUZZ_TARGET names the
 * target at compile time; FUZZ_SEEDS, where defined, a folder of the source tree replayed too
 * (the tmpl target's seeds are the templates themselves, not copies of them). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Feeds every file of `dir` and of its folders to the target; returns how many (and adds their
 * bytes). */
static int replay_folder(const char *dir, size_t *bytes)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_hidden, alphasort);
    if (n < 0)
        fail_msg("cannot list %s", dir);
    int replayed = 0;
    for (int i = 0; i < n; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        free(names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* templates/ has one per family */
            replayed += replay_folder(path, bytes);
            continue;
        }
        size_t size = 0;
        char *data = cg_read_file(path, (size_t)16 << 20, &size);
        if (!data)
            fail_msg("cannot read %s: %s", path, cg_read_error(errno));
        LLVMFuzzerTestOneInput((const uint8_t *)data, size);
        free(data);
        ++replayed;
        *bytes += size;
    }
    free(names);
    return replayed;
}

static void test_corpus_replays(void **state)
{
    (void)state;
    size_t bytes = 0;
    int replayed = replay_folder(CONVGEN_SOURCE_DIR "/tests/fuzz/corpus/" FUZZ_TARGET, &bytes);
#ifdef FUZZ_SEEDS
    replayed += replay_folder(CONVGEN_SOURCE_DIR "/" FUZZ_SEEDS, &bytes);
#endif
    print_message("%s: %d inputs (%zu bytes) replayed\n", FUZZ_TARGET, replayed, bytes);
    assert_true(replayed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        {"fuzz_" FUZZ_TARGET "_corpus_replays", test_corpus_replays, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
