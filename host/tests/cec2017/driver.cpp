// Evaluates the CEC 2017 reference implementation for the comparison tests.
// Input (stdin): records "n D x_1 ... x_D", whitespace-separated, x in decimal with
// enough digits to be exact. Output (stdout): F_n(x), one per line, with 17
// significant digits (exact for a double). The reference's source file is included
// unchanged; it reads its data from ./input_data/.
#include <cstdio>
#include <vector>
#include "cec17_test_func.cpp"

double *OShift, *M, *y, *z, *x_bound;
int ini_flag = 0, n_flag, func_flag, *SS;

int main() {
    int n, d;
    std::vector<double> x;
    while (std::scanf("%d %d", &n, &d) == 2) {
        x.resize(d);
        for (int i = 0; i < d; i++) {
            if (std::scanf("%lf", &x[i]) != 1) return 2;
        }
        double f = 0.0;
        cec17_test_func(x.data(), &f, d, 1, n);
        std::printf("%.17g\n", f);
    }
    return 0;
}
