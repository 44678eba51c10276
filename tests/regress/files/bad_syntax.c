int decide(int x) {
  int y = x * 2;
  return y +;
}
