/**
 * A bounded queue of orders shared by every instance, with producers and consumers that wait on a
 * distributed {@link java.util.concurrent.locks.Condition}: the condition of the queue's lock
 * ({@code LockTemplate.lock(key).newCondition()}), one per key across every instance. A producer
 * waits while the queue is full and a consumer while it is empty, each woken by the other's
 * {@code signalAll()}, whichever instance it runs on. The items live in the shared database
 * ({@code order_queue}); {@link io.github.zklock.sample.demo.ProducerConsumerLoad} moves items
 * through a queue from producers on one instance to consumers on the others.
 */
@NullMarked
package io.github.zklock.sample.queue;

import org.jspecify.annotations.NullMarked;
