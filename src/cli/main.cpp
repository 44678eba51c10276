#include <iostream>
int main() { std::cout << "witness\n"; return 0; }
