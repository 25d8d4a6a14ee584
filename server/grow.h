/* Growing a heap array so that it holds `need` elements of `elem` bytes: its capacity
 * *cap doubles (from 16) until it does. The one home of the amortised growth that the
 * frame ring's sets and the tick thread's touch tables use. Returns 0, or -1 when out of
 * memory (the array and *cap unchanged). Any thread, on arrays it owns. */
#ifndef SERVER_GROW_H
#define SERVER_GROW_H

#include <stdlib.h>

static inline int srv_grow(void **p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, (size_t)nc * elem);
	if (!np)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

#endif
