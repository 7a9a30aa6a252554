/**
 * Test support shared by the test packages.
 */
package io.github.zklock.test;
