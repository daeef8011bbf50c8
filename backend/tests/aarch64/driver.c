/* The C driver of backend/tests/aarch64.rs: calls the `entry` of a
 * contract compiled ahead of time (backend::inspect::object) once per
 * request, then its `batch` entry over each run of requests with the same
 * channel and component, on x86-64 natively and on aarch64 under
 * qemu-user.
 *
 * It owns nothing but the C side of runtime::native::NativeCtx and of
 * runtime::data::Slot, mirrored below field for field. The kernels it
 * runs whole are helper-free, so the helper table, program, arena and
 * table pointers are NULL (a helper call would crash, and the test would
 * say so); the powers of ten are the runtime's, copied. A contract that
 * calls helpers runs only the batch entry's vector pass: every record's
 * status starts as SKIP, so the entry point never runs.
 *
 * stdin:  the state size in words and the mode (0: whole, 2: the vector
 *         pass only), then one request per line:
 *           channel_bit component now n_slots (tag a b) * n_slots
 *         every number as a decimal u64 (negative ints in two's complement).
 * stdout: in mode 0, one line per request: the status, then every state
 *         word; then, in both modes, a line per request from the batch
 *         entry: "batch", the status, then every state word. */

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* runtime::data::Slot: repr(C), 24 bytes. */
struct Slot {
    uint64_t tag;
    uint64_t a;
    uint64_t b;
};

/* runtime::native::NativeCtx: repr(C), 8-byte fields. The test passes
 * the Rust side's size and offsets as CTX_* macros, so a field added on
 * one side only fails here, at compile time. */
struct NativeCtx {
    const struct Slot *input;
    uint64_t *state;
    const void *helpers;
    const void *program;
    uint64_t channel_bit;
    uint64_t component;
    int64_t now;
    void *arena;
    const uint64_t *addresses;
    const int64_t *pow10;
    const void *hosts;
    uint64_t hosts_len;
    uint64_t stack_floor;
    int64_t fuel;
    const void *budget;
    const struct Slot *signals;
};

#ifndef CTX_SIZE
#error "build with the CTX_* macros from backend/tests/aarch64.rs"
#endif
_Static_assert(sizeof(struct Slot) == 24, "Slot is 24 bytes");
_Static_assert(sizeof(struct NativeCtx) == CTX_SIZE, "NativeCtx's size differs from the Rust struct's");
_Static_assert(offsetof(struct NativeCtx, input) == CTX_INPUT, "NativeCtx::INPUT");
_Static_assert(offsetof(struct NativeCtx, state) == CTX_STATE, "NativeCtx::STATE");
_Static_assert(offsetof(struct NativeCtx, helpers) == CTX_HELPERS, "NativeCtx::HELPERS");
_Static_assert(offsetof(struct NativeCtx, program) == CTX_PROGRAM, "NativeCtx::PROGRAM");
_Static_assert(offsetof(struct NativeCtx, channel_bit) == CTX_CHANNEL_BIT, "NativeCtx::CHANNEL_BIT");
_Static_assert(offsetof(struct NativeCtx, component) == CTX_COMPONENT, "NativeCtx::COMPONENT");
_Static_assert(offsetof(struct NativeCtx, now) == CTX_NOW, "NativeCtx::NOW");
_Static_assert(offsetof(struct NativeCtx, arena) == CTX_ARENA, "NativeCtx::ARENA");
_Static_assert(offsetof(struct NativeCtx, addresses) == CTX_ADDRESSES, "NativeCtx::ADDRESSES");
_Static_assert(offsetof(struct NativeCtx, pow10) == CTX_POW10, "NativeCtx::POW10");
_Static_assert(offsetof(struct NativeCtx, hosts) == CTX_HOSTS, "NativeCtx::HOSTS");
_Static_assert(offsetof(struct NativeCtx, hosts_len) == CTX_HOSTS_LEN, "NativeCtx::HOSTS_LEN");
_Static_assert(offsetof(struct NativeCtx, stack_floor) == CTX_STACK_FLOOR, "NativeCtx::STACK_FLOOR");
_Static_assert(offsetof(struct NativeCtx, fuel) == CTX_FUEL, "NativeCtx::FUEL");
_Static_assert(offsetof(struct NativeCtx, signals) == CTX_SIGNALS, "NativeCtx::SIGNALS");

/* runtime::native::POW10: 10^0 ..= 10^18. */
static const int64_t POW10[19] = {
    1LL,
    10LL,
    100LL,
    1000LL,
    10000LL,
    100000LL,
    1000000LL,
    10000000LL,
    100000000LL,
    1000000000LL,
    10000000000LL,
    100000000000LL,
    1000000000000LL,
    10000000000000LL,
    100000000000000LL,
    1000000000000000LL,
    10000000000000000LL,
    100000000000000000LL,
    1000000000000000000LL,
};

/* The contract's entry point and batch entry, from the object file. */
extern uint32_t entry(struct NativeCtx *ctx);
extern uint32_t batch(struct NativeCtx *ctx, const struct Slot *rows, uint64_t n, uint64_t *states,
                      uint32_t *statuses);

/* One request as read from stdin. */
struct Request {
    uint64_t channel_bit;
    uint64_t component;
    int64_t now;
    struct Slot *slots;
};

static int read_u64(uint64_t *out) {
    char word[32];
    if (scanf("%31s", word) != 1) {
        return 0;
    }
    char *end = NULL;
    *out = strtoull(word, &end, 10);
    if (*end != '\0') {
        fprintf(stderr, "driver: not a number: %s\n", word);
        exit(2);
    }
    return 1;
}

static uint64_t need_u64(const char *what) {
    uint64_t value;
    if (!read_u64(&value)) {
        fprintf(stderr, "driver: expected %s\n", what);
        exit(2);
    }
    return value;
}

static struct NativeCtx context(const struct Request *request, uint64_t *state) {
    struct NativeCtx ctx = {
        .input = request->slots,
        .state = state,
        .helpers = NULL,
        .program = NULL,
        .channel_bit = request->channel_bit,
        .component = request->component,
        .now = request->now,
        .arena = NULL,
        .addresses = NULL,
        .pow10 = POW10,
        .hosts = NULL,
        .hosts_len = 0,
        .stack_floor = 0,
        /* Enough fuel that no loop asks the budget (a helper). */
        .fuel = INT64_MAX / 2,
        .budget = NULL,
        .signals = NULL,
    };
    return ctx;
}

static void print_words(uint32_t status, const uint64_t *state, uint64_t words) {
    printf("%" PRIu32, status);
    for (uint64_t i = 0; i < words; i++) {
        printf(" %" PRIu64, state[i]);
    }
    printf("\n");
}

/* Reads every request; returns how many, with their slot count. */
static uint64_t read_requests(struct Request **out, uint64_t *width) {
    uint64_t count = 0, capacity = 16;
    struct Request *requests = malloc(capacity * sizeof(struct Request));
    uint64_t channel_bit;
    while (requests != NULL && read_u64(&channel_bit)) {
        if (count == capacity) {
            capacity *= 2;
            requests = realloc(requests, capacity * sizeof(struct Request));
            if (requests == NULL) {
                break;
            }
        }
        struct Request *r = &requests[count++];
        r->channel_bit = channel_bit;
        r->component = need_u64("the component");
        r->now = (int64_t)need_u64("now");
        uint64_t n = need_u64("the slot count");
        if (count > 1 && n != *width) {
            fprintf(stderr, "driver: requests of %" PRIu64 " and %" PRIu64 " slots\n", *width, n);
            exit(2);
        }
        *width = n;
        /* The slots of one request, with one more: never an empty area. */
        r->slots = calloc(n + 1, sizeof(struct Slot));
        if (r->slots == NULL) {
            exit(2);
        }
        for (uint64_t i = 0; i < n; i++) {
            r->slots[i].tag = need_u64("a tag");
            r->slots[i].a = need_u64("a slot's first word");
            r->slots[i].b = need_u64("a slot's second word");
        }
    }
    if (requests == NULL) {
        exit(2);
    }
    *out = requests;
    return count;
}

/* Runs the batch entry over requests [first, end), which share a context. */
static void run_batch(const struct Request *requests, uint64_t first, uint64_t end, uint64_t width,
                      uint64_t words, uint32_t mode) {
    /* The batch entry's stride: the runtime never hands out an empty area. */
    uint64_t n = end - first, stride = words > 0 ? words : 1;
    struct Slot *rows = calloc(n * width + 1, sizeof(struct Slot));
    uint64_t *states = calloc(n * stride, sizeof(uint64_t));
    uint32_t *statuses = calloc(n, sizeof(uint32_t));
    if (rows == NULL || states == NULL || statuses == NULL) {
        exit(2);
    }
    for (uint64_t k = 0; k < n; k++) {
        memcpy(&rows[k * width], requests[first + k].slots, width * sizeof(struct Slot));
        statuses[k] = mode;
    }
    struct NativeCtx ctx = context(&requests[first], states);
    uint32_t status = batch(&ctx, rows, n, states, statuses);
    if (status != 0) {
        fprintf(stderr, "driver: the batch entry returned %" PRIu32 "\n", status);
        exit(2);
    }
    for (uint64_t k = 0; k < n; k++) {
        printf("batch ");
        print_words(statuses[k], &states[k * stride], words);
    }
    free(rows);
    free(states);
    free(statuses);
}

int main(void) {
    uint64_t words = need_u64("the state size");
    uint32_t mode = (uint32_t)need_u64("the mode");
    struct Request *requests = NULL;
    uint64_t width = 0;
    uint64_t count = read_requests(&requests, &width);
    /* One word more than needed: the runtime never hands out an empty area. */
    uint64_t *state = calloc(words + 1, sizeof(uint64_t));
    if (state == NULL) {
        return 2;
    }
    for (uint64_t k = 0; mode == 0 && k < count; k++) {
        memset(state, 0, (words + 1) * sizeof(uint64_t));
        struct NativeCtx ctx = context(&requests[k], state);
        uint32_t status = entry(&ctx);
        print_words(status, state, words);
    }
    for (uint64_t first = 0, end; first < count; first = end) {
        for (end = first + 1; end < count && requests[end].channel_bit == requests[first].channel_bit &&
                              requests[end].component == requests[first].component;
             end++) {
        }
        run_batch(requests, first, end, width, words, mode);
    }
    for (uint64_t k = 0; k < count; k++) {
        free(requests[k].slots);
    }
    free(requests);
    free(state);
    return 0;
}
