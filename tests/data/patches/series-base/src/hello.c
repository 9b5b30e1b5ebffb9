#include <stdio.h>

/* Print a greeting for each name given. */
static void greet(const char *name)
{
	printf("hello %s\n", name);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		greet(argv[i]);
	return 0;
}
