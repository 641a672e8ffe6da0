/*
 * png-check: load a PNG with cairo's own loader and check it is a real
 * picture of the expected size, for the report tests.
 *
 *   png-check FILE WIDTH HEIGHT
 *
 * Prints "WIDTHxHEIGHT colours=N ink=P%" (distinct colours up to 4096, and
 * the share of pixels that are not the background colour, which is the
 * top-left pixel).  Fails when the file does not load, has another size, or
 * is blank: one colour, or less than 0.5 % ink.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cairo.h>

#define MAX_COLOURS 4096
/* a power of two above MAX_COLOURS, so a probe always ends at a free bucket */
#define COLOUR_BUCKETS 8192

/* Counts the colour the first time it is seen, up to MAX_COLOURS: an
 * open-addressed set, since a linear search of the colours seen made the
 * check of a many-coloured chart cost a second under the sanitizers. */
static void note_colour(uint32_t colour, uint32_t *buckets, unsigned char *used,
			size_t *colours)
{
	size_t i = (colour * 2654435761u) & (COLOUR_BUCKETS - 1);

	while (used[i] && buckets[i] != colour)
		i = (i + 1) & (COLOUR_BUCKETS - 1);
	if (used[i] || *colours >= MAX_COLOURS)
		return;
	used[i] = 1;
	buckets[i] = colour;
	(*colours)++;
}

int main(int argc, char **argv)
{
	static uint32_t buckets[COLOUR_BUCKETS];
	static unsigned char used[COLOUR_BUCKETS];
	cairo_surface_t *s;
	int w, h, stride, want_w, want_h, status = 1;
	size_t colours = 0, ink = 0;
	unsigned char *data;
	uint32_t bg, last;

	if (argc != 4) {
		fprintf(stderr, "usage: png-check FILE WIDTH HEIGHT\n");
		return 2;
	}
	want_w = atoi(argv[2]);
	want_h = atoi(argv[3]);
	s = cairo_image_surface_create_from_png(argv[1]);
	if (cairo_surface_status(s)) {
		fprintf(stderr, "png-check: '%s': %s\n", argv[1],
			cairo_status_to_string(cairo_surface_status(s)));
		goto out;
	}
	w = cairo_image_surface_get_width(s);
	h = cairo_image_surface_get_height(s);
	if (w != want_w || h != want_h) {
		fprintf(stderr, "png-check: '%s': %dx%d, expected %dx%d\n", argv[1], w, h, want_w,
			want_h);
		goto out;
	}
	cairo_surface_flush(s);
	data = cairo_image_surface_get_data(s);
	stride = cairo_image_surface_get_stride(s);
	bg = *(uint32_t *)(void *)data;
	last = bg;
	note_colour(bg, buckets, used, &colours);
	for (int y = 0; y < h; y++) {
		const uint32_t *row = (const uint32_t *)(void *)(data + (size_t)y * (size_t)stride);

		for (int x = 0; x < w; x++) {
			ink += row[x] != bg;
			/* runs of one colour are most of a chart */
			if (row[x] != last) {
				last = row[x];
				note_colour(last, buckets, used, &colours);
			}
		}
	}
	printf("%dx%d colours=%zu ink=%.2f%%\n", w, h, colours,
	       100.0 * (double)ink / ((double)w * h));
	if (colours < 2 || ink * 200 < (size_t)w * (size_t)h) {
		fprintf(stderr, "png-check: '%s': blank picture\n", argv[1]);
		goto out;
	}
	status = 0;
out:
	cairo_surface_destroy(s);
	return status;
}
