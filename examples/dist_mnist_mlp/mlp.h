/* SPDX-License-Identifier: MIT */
/*
 * A 784-H-10 multilayer perceptron on the CPU, float32: ReLU hidden layer,
 * softmax cross-entropy loss. Parameters and gradients are one flat vector
 * each, laid out alike (W1 [784][H], b1 [H], W2 [10][H], b2 [10]), so that
 * a gradient is one buffer to allreduce. W1 is stored by input pixel: the
 * pixels that are 0 (half of Fashion-MNIST's) cost nothing.
 */
#ifndef DIST_MNIST_MLP_H
#define DIST_MNIST_MLP_H

#include <stddef.h>
#include <stdint.h>

#include "mnist.h"

struct mlp {
	int hidden;
	size_t nparams;
	float *scratch;		/* a sample's activations and their gradients */
};

/* 0, or -1 if out of memory. */
int mlp_init(struct mlp *m, int hidden);
void mlp_free(struct mlp *m);

/* Deterministic initial parameters from @seed (He-uniform weights, zero biases). */
void mlp_init_params(const struct mlp *m, float *params, uint64_t seed);

/*
 * Mean gradient of the loss over the @n images @idx of @set into @grad (the
 * whole vector is written). Returns the loss summed over the @n images;
 * *@correct gets how many of them were classified right.
 */
double mlp_grad(const struct mlp *m, const float *params, float *grad,
		const struct mnist *set, const int *idx, int n, int *correct);

/* Loss summed over images @first .. @first + @n - 1 of @set; *@correct as above. */
double mlp_eval(const struct mlp *m, const float *params, const struct mnist *set,
		int first, int n, int *correct);

/* params -= lr * grad */
void mlp_sgd(const struct mlp *m, float *params, const float *grad, float lr);

/* xorshift64*: the one random number generator, so every rank draws alike. */
uint64_t mlp_rand(uint64_t *state);

#endif
