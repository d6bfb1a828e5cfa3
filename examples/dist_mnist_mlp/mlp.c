// SPDX-License-Identifier: MIT
/*
 * The MLP's arithmetic: plain loops in a fixed order, so that the same
 * inputs give bit-identical results on every rank and every run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"

#define IN	MNIST_PIXELS
#define OUT	MNIST_CLASSES

struct view {
	float *w1, *b1, *w2, *b2;
};

static struct view view_of(const struct mlp *m, const float *p)
{
	float *base = (float *)p;
	size_t h = (size_t)m->hidden;

	return (struct view){
		.w1 = base, .b1 = base + h * IN,
		.w2 = base + h * IN + h, .b2 = base + h * IN + h + OUT * h,
	};
}

int mlp_init(struct mlp *m, int hidden)
{
	size_t h = (size_t)hidden;

	m->hidden = hidden;
	m->nparams = h * IN + h + OUT * h + OUT;
	/* x [IN], h [H], dh [H], z [OUT] */
	m->scratch = malloc((IN + 2 * h + OUT) * sizeof(float));
	return m->scratch ? 0 : -1;
}

void mlp_free(struct mlp *m)
{
	free(m->scratch);
	m->scratch = NULL;
}

uint64_t mlp_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [-1, 1). */
static float uniform(uint64_t *state)
{
	return (float)((double)(mlp_rand(state) >> 11) / (double)(1ull << 52) - 1.0);
}

void mlp_init_params(const struct mlp *m, float *params, uint64_t seed)
{
	struct view v = view_of(m, params);
	uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
	float a1 = sqrtf(6.0f / IN), a2 = sqrtf(6.0f / (float)m->hidden);
	size_t h = (size_t)m->hidden, i;

	memset(params, 0, m->nparams * sizeof(float));
	for (i = 0; i < h * IN; i++)
		v.w1[i] = a1 * uniform(&state);
	for (i = 0; i < OUT * h; i++)
		v.w2[i] = a2 * uniform(&state);
}

/*
 * Forward pass of image @img: leaves x, h (after ReLU) and the softmax of
 * the logits in the scratch space, counts a right answer in *@correct, and
 * returns the sample's loss, -log softmax[label].
 */
static double forward(const struct mlp *m, const struct view *v, const uint8_t *img,
		      int label, int *correct)
{
	size_t hn = (size_t)m->hidden, i, j;
	float *x = m->scratch, *h = x + IN, *z = h + 2 * hn;
	float zmax, sum = 0;
	int best = 0;

	/* h = W1 x + b1 as a sum of W1's rows for the pixels that are not 0 */
	memcpy(h, v->b1, hn * sizeof(float));
	for (i = 0; i < IN; i++) {
		const float *w = v->w1 + i * hn;
		float xi = img[i] * (1.0f / 255.0f);

		x[i] = xi;
		if (xi == 0)
			continue;
		for (j = 0; j < hn; j++)
			h[j] += xi * w[j];
	}
	for (j = 0; j < hn; j++)
		h[j] = h[j] > 0 ? h[j] : 0;
	for (j = 0; j < OUT; j++) {
		const float *w = v->w2 + j * hn;
		float acc = v->b2[j];

		for (i = 0; i < hn; i++)
			acc += w[i] * h[i];
		z[j] = acc;
		if (acc > z[best])
			best = (int)j;
	}
	*correct += best == label;
	zmax = z[best];
	for (j = 0; j < OUT; j++) {
		z[j] = expf(z[j] - zmax);
		sum += z[j];
	}
	for (j = 0; j < OUT; j++)
		z[j] /= sum;
	return -log(z[label] > 1e-30f ? (double)z[label] : 1e-30);
}

double mlp_grad(const struct mlp *m, const float *params, float *grad,
		const struct mnist *set, const int *idx, int n, int *correct)
{
	struct view v = view_of(m, params), g = view_of(m, grad);
	size_t hn = (size_t)m->hidden, i, j;
	float *x = m->scratch, *h = x + IN, *dh = h + hn, *p = dh + hn;
	float scale = 1.0f / (float)n;
	double loss = 0;
	int s;

	*correct = 0;
	memset(grad, 0, m->nparams * sizeof(float));
	for (s = 0; s < n; s++) {
		int label = set->labels[idx[s]];

		loss += forward(m, &v, set->images + (size_t)idx[s] * IN, label, correct);
		/* dL/dz = softmax - onehot, averaged over the batch */
		p[label] -= 1.0f;
		for (j = 0; j < OUT; j++)
			p[j] *= scale;
		for (i = 0; i < hn; i++)
			dh[i] = 0;
		for (j = 0; j < OUT; j++) {
			const float *w = v.w2 + j * hn;
			float *gw = g.w2 + j * hn;

			g.b2[j] += p[j];
			for (i = 0; i < hn; i++) {
				gw[i] += p[j] * h[i];
				dh[i] += p[j] * w[i];
			}
		}
		for (j = 0; j < hn; j++) {
			dh[j] = h[j] > 0 ? dh[j] : 0;
			g.b1[j] += dh[j];
		}
		for (i = 0; i < IN; i++) {
			float *gw = g.w1 + i * hn;
			float xi = x[i];

			if (xi == 0)
				continue;
			for (j = 0; j < hn; j++)
				gw[j] += xi * dh[j];
		}
	}
	return loss;
}

double mlp_eval(const struct mlp *m, const float *params, const struct mnist *set,
		int first, int n, int *correct)
{
	struct view v = view_of(m, params);
	double loss = 0;
	int s;

	*correct = 0;
	for (s = first; s < first + n; s++)
		loss += forward(m, &v, set->images + (size_t)s * IN, set->labels[s],
				correct);
	return loss;
}

void mlp_sgd(const struct mlp *m, float *params, const float *grad, float lr)
{
	size_t i;

	for (i = 0; i < m->nparams; i++)
		params[i] -= lr * grad[i];
}
