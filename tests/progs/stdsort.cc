// stdsort: std::sort on ints (with and without a comparator) and on
// records, for the line tables of clang's DWARF 5 (template code of
// stl_algo.h whose sequences start before the first DW_LNS_set_file).
#include <algorithm>
#include <cstdio>
#include <vector>

static unsigned seed = 12345;

static unsigned rnd()
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

struct Rec {
    unsigned k, v;
};

static bool by_key(const Rec &a, const Rec &b)
{
    return a.k < b.k;
}

int main()
{
    std::vector<int> v;
    std::vector<Rec> r;
    long sum = 0;
    for (int round = 0; round < 4; round++) {
        v.clear();
        r.clear();
        for (int i = 0; i < 100000; i++) {
            v.push_back((int)rnd());
            r.push_back(Rec{rnd(), (unsigned)i});
        }
        std::sort(v.begin(), v.end());
        std::sort(r.begin(), r.end(), by_key);
        std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
        sum += v[0] + r[0].v;
    }
    std::printf("%ld\n", sum);
    return 0;
}
