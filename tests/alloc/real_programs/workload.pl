#!/usr/bin/perl
# A deterministic Perl workload: hashes, regular expressions, sorting, string building.
use strict;
use warnings;

my $x = 12345;
sub rnd { $x = ($x * 1103515245 + 12345) % 2147483648; return $x; }

my @words = qw(apple banana cherry date elder fig grape honeydew kiwi lemon mango nectarine);
my %count;
my %lengths;
my @lines;
for my $i (1 .. 60000) {
  my $w = $words[rnd() % @words] . (rnd() % 500);
  $count{$w}++;
  push @{ $lengths{ length $w } }, $w;
  push @lines, sprintf("%06d %s %s", rnd() % 1000000, $w, "z" x (rnd() % 40));
}
my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 9];
print "top: @top\n";
print "distinct: ", scalar(keys %count), "\n";
for my $len (sort { $a <=> $b } keys %lengths) {
  my @s = sort @{ $lengths{$len} };
  print "len $len: ", scalar(@s), " first $s[0] last $s[-1]\n";
}
my @sorted = sort { (split ' ', $a)[0] <=> (split ' ', $b)[0] or $a cmp $b } @lines;
print "sorted: $sorted[0]\n        $sorted[-1]\n";
my $text = join("\n", @lines);
my $fruits = () = $text =~ /\b(?:apple|mango)\d{2,3}\b/g;
(my $squeezed = $text) =~ s/z{10,}/<long>/g;
my %first_letter;
$first_letter{ substr($_, 7, 1) }++ for @lines;
print "fruits: $fruits squeezed: ", length($squeezed), "\n";
print join(",", map { "$_=$first_letter{$_}" } sort keys %first_letter), "\n";
my %h;
for my $i (1 .. 200000) { $h{"k" . (rnd() % 50000)} .= "v"; delete $h{"k" . (rnd() % 50000)} if $i % 3 == 0; }
my $sum = 0; $sum += length($h{$_}) for keys %h;
print "hash: ", scalar(keys %h), " $sum\n";
