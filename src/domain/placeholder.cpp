namespace witness {}
