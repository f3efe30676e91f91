// cxx.cc: a C++ program for the demangling tests: classes with virtual
// and overloaded members, templates, a namespace, an anonymous namespace
// and recursion.
#include <cstdio>
#include <vector>

#define NOINLINE __attribute__((noinline))

static volatile double acc;

namespace geo
{

struct Shape {
    virtual ~Shape() {}
    virtual double area(int n) const = 0;
};

struct Square : Shape {
    double side;
    explicit Square(double s) : side(s) {}
    NOINLINE double area(int n) const override
    {
        double a = 0;
        for (int i = 0; i < n; i++)
            a += side * side * 0.001 * i;
        return a;
    }
};

struct Circle : Shape {
    double r;
    explicit Circle(double x) : r(x) {}
    NOINLINE double area(int n) const override
    {
        double a = 0;
        for (int i = 0; i < n; i++)
            a += 3.14159 * r * r * 0.002 * i;
        return a;
    }
};

NOINLINE double scale(double x)
{
    acc += x;
    return x * 2;
}

NOINLINE double scale(int x)
{
    acc += x;
    return x * 3.0;
}

} // namespace geo

namespace
{

NOINLINE unsigned long fib(unsigned n)
{
    unsigned long r = n < 2 ? n : fib(n - 1) + fib(n - 2);
    acc += 1;
    return r;
}

} // namespace

template <typename T> NOINLINE T sum(const std::vector<T> &v, int reps)
{
    T s = T();
    for (int k = 0; k < reps; k++)
        for (const T &x : v)
            s += x;
    acc += 1;
    return s;
}

template <typename T> struct Box {
    T value;
    NOINLINE T twice(int reps) const
    {
        T s = T();
        for (int i = 0; i < reps; i++)
            s += value + value;
        acc += 1;
        return s;
    }
};

int main()
{
    geo::Square sq(2.0);
    geo::Circle ci(1.5);
    std::vector<geo::Shape *> shapes{&sq, &ci};
    double total = 0;
    for (int i = 0; i < 200; i++)
        for (geo::Shape *s : shapes)
            total += s->area(200000);
    total += geo::scale(1.5) + geo::scale(3);
    total += (double)fib(27);
    std::vector<int> vi(1000, 3);
    std::vector<double> vd(1000, 0.5);
    for (int i = 0; i < 10; i++)
        total += sum(vi, 3000) + sum(vd, 3000);
    Box<int> bi{4};
    Box<double> bd{2.5};
    total += bi.twice(20000000) + bd.twice(20000000);
    std::printf("%.0f\n", total > 0 ? 1.0 : 0.0);
    return 0;
}
