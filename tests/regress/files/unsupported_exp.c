#include <math.h>

int decide(double n) {
  return exp(n) > 2.0;
}
