// libcalls_cxx: a -pg C++ program whose calls into libstdc++.so are known
// for N on the command line: operator new and operator delete N each
// (churn), std::string::append N (grow: the string's _M_append), and
// std::sort of a vector (inlined: no library call of its own).  Exits 0.
// Used by tests/t0601-libcalls-more.sh, which compares the counts with
// ltrace -c and checks the names are demangled.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

static volatile long sink;

__attribute__((noinline)) static void churn(long n)
{
    for (long i = 0; i < n; i++) {
        int *volatile p = new int(static_cast<int>(i));
        sink = sink + *p;
        delete p;
    }
}

__attribute__((noinline)) static void grow(long n, std::string &s)
{
    const char *volatile piece = "ab";
    for (long i = 0; i < n; i++)
        s.append(piece);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 1000;
    std::vector<int> v;
    v.reserve(static_cast<size_t>(n));
    for (long i = 0; i < n; i++)
        v.push_back(static_cast<int>((i * 7919) % n));
    std::sort(v.begin(), v.end());
    churn(n);
    std::string s;
    s.reserve(static_cast<size_t>(2 * n + 1));
    grow(n, s);
    sink = sink + static_cast<long>(s.size()) + v[0];
    return 0;
}
