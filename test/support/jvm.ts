/**
 * JVM flags for the short-lived `mvn` and `gradle` runs of the tests (MAVEN_OPTS, GRADLE_OPTS):
 * the C1 compiler alone and the serial collector. A client JVM lives seconds, and C2 and G1's
 * background threads cost it more CPU than they save: measured on `mvn compile` of an empty
 * project, 2.4-2.8 s of CPU by default, 1.2-1.4 s with these. What the client does is the same.
 */
export const QUICK_JVM_OPTS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'
