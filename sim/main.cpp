// tiersim command line (placeholder while the CLI is written).
int main() { return 0; }
