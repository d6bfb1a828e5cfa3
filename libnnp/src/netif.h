/* SPDX-License-Identifier: MIT */
/*
 * The bootstrap's addresses: IPv4 or IPv6, which interface a job's root
 * listens on (NNP_SOCKET_IFNAME, NNP_SOCKET_FAMILY), and addresses as
 * text for messages.
 */
#ifndef NNP_NETIF_H
#define NNP_NETIF_H

#include <netinet/in.h>
#include <sys/socket.h>

#include "nnp/nnp.h"

union nnp_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

socklen_t nnp_sockaddr_len(const union nnp_sockaddr *a);
/* The port, in host order. */
unsigned int nnp_sockaddr_port(const union nnp_sockaddr *a);
void nnp_sockaddr_set_port(union nnp_sockaddr *a, unsigned int port);

/* "10.0.0.1:29500" or "[fd00::1]:29500". */
#define NNP_SOCKADDR_TEXT	64
const char *nnp_sockaddr_text(const union nnp_sockaddr *a,
			      char buf[NNP_SOCKADDR_TEXT]);

/*
 * Does interface @name pass @list, NNP_SOCKET_IFNAME's syntax (NCCL's):
 * comma-separated name prefixes; "^" first: any interface but those; "="
 * first: exact names instead of prefixes.
 */
int nnp_ifname_match(const char *list, const char *name);

/*
 * The address a job's root serves on: the first up interface's first
 * address (IPv4 before IPv6, link-local IPv6 never) among the interfaces
 * NNP_SOCKET_IFNAME lets through (when unset: all but loopback), of the
 * family NNP_SOCKET_FAMILY names (AF_INET or AF_INET6; unset: either).
 * With none: the loopback address of that family. Port 0.
 * NNP_ERROR_INVALID_ARGUMENT for a NNP_SOCKET_FAMILY it does not know.
 */
nnp_result_t nnp_pick_address(union nnp_sockaddr *out);

/*
 * "host:port" (host a name, an IPv4 address or an IPv6 one in brackets)
 * resolved into @out.
 */
nnp_result_t nnp_parse_host_port(const char *s, union nnp_sockaddr *out);

#endif /* NNP_NETIF_H */
