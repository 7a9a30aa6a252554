/**
 * Command-line tools of {@code ./demo.sh}, launched from the sample's jar: a stand-alone ZooKeeper
 * server that several application instances share, a load generator that sends concurrent
 * purchases to the instances over HTTP and then audits the shared database, producers and
 * consumers of an order queue on different instances (the distributed condition), the audit of the
 * scheduled jobs, and what {@code ./demo.sh --tls} observes of its ZooKeeper server that requires
 * client certificates.
 */
@NullMarked
package io.github.zklock.sample.demo;

import org.jspecify.annotations.NullMarked;
