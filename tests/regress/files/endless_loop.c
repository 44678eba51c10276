int decide(int n) {
  unsigned s = 0;
  while (1) s += (unsigned)n;
  return (int)s;
}
