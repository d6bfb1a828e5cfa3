// SPDX-License-Identifier: MIT
/* libnnp's bootstrap addresses: interface choice, parsing and text. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netif.h"

socklen_t nnp_sockaddr_len(const union nnp_sockaddr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in);
}

unsigned int nnp_sockaddr_port(const union nnp_sockaddr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->in6.sin6_port : a->in.sin_port);
}

void nnp_sockaddr_set_port(union nnp_sockaddr *a, unsigned int port)
{
	if (a->sa.sa_family == AF_INET6)
		a->in6.sin6_port = htons((uint16_t)port);
	else
		a->in.sin_port = htons((uint16_t)port);
}

const char *nnp_sockaddr_text(const union nnp_sockaddr *a,
			      char buf[NNP_SOCKADDR_TEXT])
{
	char host[INET6_ADDRSTRLEN] = "?";
	int v6 = a->sa.sa_family == AF_INET6;

	inet_ntop(a->sa.sa_family, v6 ? (const void *)&a->in6.sin6_addr :
		  (const void *)&a->in.sin_addr, host, sizeof(host));
	snprintf(buf, NNP_SOCKADDR_TEXT, v6 ? "[%s]:%u" : "%s:%u", host,
		 nnp_sockaddr_port(a));
	return buf;
}

int nnp_ifname_match(const char *list, const char *name)
{
	int exclude = list[0] == '^', exact;
	const char *p;

	list += exclude;
	exact = list[0] == '=';
	list += exact;
	for (p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len && (exact ? strlen(name) == len : 1) &&
		    !strncmp(p, name, len))
			return !exclude;
		p += len + (p[len] == ',');
	}
	return exclude;
}

static int family_from_env(int *family)
{
	const char *s = getenv("NNP_SOCKET_FAMILY");

	*family = AF_UNSPEC;
	if (!s || !*s)
		return 1;
	if (!strcmp(s, "AF_INET"))
		*family = AF_INET;
	else if (!strcmp(s, "AF_INET6"))
		*family = AF_INET6;
	return *family != AF_UNSPEC;
}

/* Can a job's other ranks reach us at @i's address? */
static int usable(const struct ifaddrs *i, const char *ifname, int family)
{
	const struct sockaddr *sa = i->ifa_addr;

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    (family != AF_UNSPEC && sa->sa_family != family) ||
	    !(i->ifa_flags & IFF_UP))
		return 0;
	/* A link-local address means nothing without the peer's own scope. */
	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr))
		return 0;
	if (ifname)
		return nnp_ifname_match(ifname, i->ifa_name);
	return !(i->ifa_flags & IFF_LOOPBACK);
}

/* The first usable address of family @want in @list, into @out. */
static int first_of(const struct ifaddrs *list, const char *ifname, int family,
		    int want, union nnp_sockaddr *out)
{
	const struct ifaddrs *i;

	for (i = list; i; i = i->ifa_next) {
		if (!usable(i, ifname, family) || i->ifa_addr->sa_family != want)
			continue;
		memset(out, 0, sizeof(*out));
		memcpy(out, i->ifa_addr, want == AF_INET6 ? sizeof(out->in6) :
		       sizeof(out->in));
		nnp_sockaddr_set_port(out, 0);
		nnp_log(NNP_LOG_TRACE, "bootstrap interface %s", i->ifa_name);
		return 1;
	}
	return 0;
}

nnp_result_t nnp_pick_address(union nnp_sockaddr *out)
{
	const char *ifname = getenv("NNP_SOCKET_IFNAME");
	struct ifaddrs *list = NULL;
	int family, found = 0;

	if (!family_from_env(&family))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"NNP_SOCKET_FAMILY=%s is neither AF_INET nor AF_INET6",
				getenv("NNP_SOCKET_FAMILY"));
	if (ifname && !*ifname)
		ifname = NULL;
	if (!getifaddrs(&list)) {
		found = family != AF_INET6 &&
			first_of(list, ifname, family, AF_INET, out);
		if (!found && family != AF_INET)
			found = first_of(list, ifname, family, AF_INET6, out);
		freeifaddrs(list);
	}
	if (found)
		return NNP_SUCCESS;
	nnp_log(NNP_LOG_WARN, "no interface%s%s with an address: using loopback",
		ifname ? " matching NNP_SOCKET_IFNAME=" : "", ifname ? ifname : "");
	memset(out, 0, sizeof(*out));
	if (family == AF_INET6) {
		out->in6.sin6_family = AF_INET6;
		out->in6.sin6_addr = in6addr_loopback;
	} else {
		out->in.sin_family = AF_INET;
		out->in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	return NNP_SUCCESS;
}

nnp_result_t nnp_parse_host_port(const char *s, union nnp_sockaddr *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	const char *colon = strrchr(s, ':'), *host = s;
	struct addrinfo *res;
	size_t len;
	char name[256];
	int err;

	if (!colon || colon == s)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"'%s' is not host:port", s);
	len = (size_t)(colon - s);
	if (s[0] == '[' && colon[-1] == ']') {
		host++;
		len -= 2;
	}
	if (len >= sizeof(name) || !len)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"'%s': the host is empty or too long", s);
	memcpy(name, host, len);
	name[len] = '\0';
	err = getaddrinfo(name, colon + 1, &hints, &res);
	if (err)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "'%s': %s", s,
				gai_strerror(err));
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen < sizeof(*out) ?
	       res->ai_addrlen : sizeof(*out));
	freeaddrinfo(res);
	if (!nnp_sockaddr_port(out))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "'%s': port 0", s);
	return NNP_SUCCESS;
}
