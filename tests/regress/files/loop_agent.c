/* A loop whose length is an input: a query over long runs reaches the loop bound. */
int decide(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s = (s * 7 + i) % 1000;
  return s > 100;
}
