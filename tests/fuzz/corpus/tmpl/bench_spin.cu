{#- The spin kernel of the bench and of AUTO's timing (runtime/tune.c): one thread waits `ns` nanoseconds of the GPU's global timer. It is
    queued before each timed run's start event, so the host enqueues the event, the run and the
    stop event while the GPU waits: a microsecond-scale run is then timed without the host's
    launch latency (otherwise it leaks in, and more so for libraries with heavier host paths). -#}
// convgen bench: a wait of a given number of nanoseconds on the GPU.
extern "C" __global__ void {{ kernel_name }}(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}
