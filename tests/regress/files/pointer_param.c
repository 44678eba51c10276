int decide(const int* n) { return *n > 0; }
